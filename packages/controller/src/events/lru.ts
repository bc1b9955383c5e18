/**
 * A bounded map that evicts the least recently used entry, as the correlator's caches do in
 * client-go (`golang/groupcache/lru`): both `get` and `set` count as a use.
 */
export class LruCache<K, V> {
  readonly #capacity: number;
  /** Insertion order of a `Map` is its recency order: oldest first. */
  readonly #entries = new Map<K, V>();

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`LRU capacity must be >= 1, got ${capacity}`);
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }
}
