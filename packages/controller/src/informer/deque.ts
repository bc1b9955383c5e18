/**
 * An unbounded FIFO of values backed by a growable ring buffer, so pushes and shifts are O(1) and a
 * drained queue keeps no references to delivered values (the informer caches are large).
 */
export class Deque<T> {
  #buffer: (T | undefined)[];
  #head = 0;
  #length = 0;

  constructor(initialCapacity = 16) {
    this.#buffer = new Array<T | undefined>(Math.max(1, initialCapacity));
  }

  get length(): number {
    return this.#length;
  }

  push(value: T): void {
    if (this.#length === this.#buffer.length) this.#grow();
    this.#buffer[(this.#head + this.#length) % this.#buffer.length] = value;
    this.#length += 1;
  }

  /** Removes and returns the oldest value, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const value = this.#buffer[this.#head];
    this.#buffer[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#buffer.length;
    this.#length -= 1;
    return value;
  }

  /** Drops every value. */
  clear(): void {
    this.#buffer = new Array<T | undefined>(this.#buffer.length);
    this.#head = 0;
    this.#length = 0;
  }

  #grow(): void {
    const next = new Array<T | undefined>(this.#buffer.length * 2);
    for (let i = 0; i < this.#length; i++) next[i] = this.#buffer[(this.#head + i) % this.#buffer.length];
    this.#buffer = next;
    this.#head = 0;
  }
}
