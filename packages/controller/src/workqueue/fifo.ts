/**
 * A first-in first-out list whose take costs the same however many items have already left it. An
 * insertion-ordered `Set` does not: V8 keeps a deleted entry's slot until the table shrinks, so taking
 * its first entry walks every slot deleted before it, and draining 200 000 keys took 13 s (20 000: 0.1 s).
 */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  /** How many items are in it. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** Appends `item`. */
  push(item: T): void {
    this.#items.push(item);
  }

  /** Removes and returns the oldest item; `undefined` when empty. */
  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Drop the taken prefix once it is most of the array: amortised O(1), memory bounded by 2 × size.
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
