/**
 * A min-heap of keys by ready time, each key at most once. Ties go to the key scheduled first, so
 * items due at the same moment are released in the order they were scheduled.
 */

interface Entry {
  item: string;
  readyAt: number;
  /** Insertion order, the tie-breaker. */
  seq: number;
  /** Position in the heap array. */
  index: number;
}

export class ReadyTimeHeap {
  readonly #heap: Entry[] = [];
  readonly #entries = new Map<string, Entry>();
  #seq = 0;

  /** Schedules `item` at `readyAt`; an item already scheduled keeps the earlier of the two times. */
  schedule(item: string, readyAt: number): void {
    const existing = this.#entries.get(item);
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.#up(existing.index);
      }
      return;
    }
    const entry: Entry = { item, readyAt, seq: this.#seq++, index: this.#heap.length };
    this.#heap.push(entry);
    this.#entries.set(item, entry);
    this.#up(entry.index);
  }

  /** The earliest ready time, if any item is scheduled. */
  nextReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /** Removes and returns the earliest item if it is ready at `now`. */
  popReady(now: number): string | undefined {
    const top = this.#heap[0];
    if (top === undefined || top.readyAt > now) return undefined;
    const last = this.#heap.pop() as Entry;
    if (last !== top) {
      this.#place(last, 0);
      this.#down(0);
    }
    this.#entries.delete(top.item);
    return top.item;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#entries.clear();
  }

  #before(a: Entry, b: Entry): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  #place(entry: Entry, index: number): void {
    this.#heap[index] = entry;
    entry.index = index;
  }

  #up(index: number): void {
    const entry = this.#heap[index] as Entry;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.#heap[parentIndex] as Entry;
      if (!this.#before(entry, parent)) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(entry, index);
  }

  #down(index: number): void {
    const entry = this.#heap[index] as Entry;
    const length = this.#heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const childIndex =
        right < length && this.#before(this.#heap[right] as Entry, this.#heap[left] as Entry) ? right : left;
      const child = this.#heap[childIndex] as Entry;
      if (!this.#before(child, entry)) break;
      this.#place(child, index);
      index = childIndex;
    }
    this.#place(entry, index);
  }
}
