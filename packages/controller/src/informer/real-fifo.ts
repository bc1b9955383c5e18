/**
 * The queue between the reflector and the informer's handlers, with client-go's RealFIFO semantics:
 * every change is queued as its own delta in arrival order, nothing is merged, and a relist turns
 * objects that vanished meanwhile into {@link DeletedFinalStateUnknown} tombstones.
 */
import type { KubeObject } from '../client/resource-client.ts';
import { Deque } from './deque.ts';
import { deletionHandlingMetaNamespaceKey, type KeyFunc } from './keys.ts';
import { DeletedFinalStateUnknown } from './tombstone.ts';

/** What happened to an object. `Replaced` comes from a relist, `Sync` from a periodic resync. */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/** One queued change. Only `Deleted` deltas may carry a tombstone. */
export type Delta<T> =
  | { readonly type: 'Added' | 'Updated' | 'Replaced' | 'Sync'; readonly key: string; readonly object: T }
  | { readonly type: 'Deleted'; readonly key: string; readonly object: T | DeletedFinalStateUnknown<T> };

/** The consumer's cache, consulted to find deletions missed during a relist and objects to resync. */
export interface KnownObjects<T> {
  keys(): Iterable<string>;
  getByKey(key: string): T | undefined;
}

/** Processes one delta taken from the queue; `isInInitialList` is true while the first relist is still being drained. */
export type ProcessDelta<T> = (delta: Delta<T>, isInInitialList: boolean) => void;

interface QueuedKey<T> {
  /** Deltas of this key still queued. */
  count: number;
  last: Delta<T>;
}

/** A delta queue with RealFIFO semantics. */
export class RealFifo<T extends KubeObject> {
  readonly #known: KnownObjects<T>;
  readonly #keyOf: KeyFunc<T>;
  readonly #items = new Deque<Delta<T>>(1024);
  readonly #queued = new Map<string, QueuedKey<T>>();
  /** Whether a first `replace` or any other change has been queued. */
  #populated = false;
  /** Deltas of the first `replace` (and everything queued before it) not yet processed. */
  #initialPopulationCount = 0;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(known: KnownObjects<T>, keyOf: KeyFunc<T> = deletionHandlingMetaNamespaceKey) {
    this.#known = known;
    this.#keyOf = keyOf;
  }

  /** Number of queued deltas. */
  get length(): number {
    return this.#items.length;
  }

  add(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Added', key: this.#keyOf(obj), object: obj });
  }

  update(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Updated', key: this.#keyOf(obj), object: obj });
  }

  delete(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Deleted', key: this.#keyOf(obj), object: obj });
  }

  /**
   * Queues a relist: first a tombstone for every queued or cached key missing from `items` (unless its
   * last queued delta already is a deletion), then one `Replaced` delta per listed item.
   */
  replace(items: readonly T[]): void {
    const listed = new Set<string>();
    for (const item of items) listed.add(this.#keyOf(item));

    const vanished: [string, T][] = [];
    for (const [key, queued] of this.#queued) {
      if (listed.has(key) || queued.last.type === 'Deleted') continue;
      vanished.push([key, queued.last.object]);
    }
    for (const key of this.#known.keys()) {
      if (listed.has(key) || this.#queued.has(key)) continue;
      const obj = this.#known.getByKey(key);
      if (obj !== undefined) vanished.push([key, obj]);
    }
    for (const [key, obj] of vanished) {
      this.#push({ type: 'Deleted', key, object: new DeletedFinalStateUnknown(key, obj) });
    }
    for (const item of items) this.#push({ type: 'Replaced', key: this.#keyOf(item), object: item });

    if (!this.#populated) {
      this.#populated = true;
      this.#initialPopulationCount = this.#items.length;
    }
  }

  /** Queues a `Sync` delta for every cached key that has nothing queued. */
  resync(): void {
    for (const key of this.#known.keys()) {
      if (this.#queued.has(key)) continue;
      const obj = this.#known.getByKey(key);
      if (obj !== undefined) this.#push({ type: 'Sync', key, object: obj });
    }
  }

  /** True once the first relist has been processed, or at once if changes came before any relist. */
  hasSynced(): boolean {
    return this.#populated && this.#initialPopulationCount === 0;
  }

  /**
   * Waits for deltas, then processes with `process` every delta queued, including those queued
   * meanwhile, in order. Resolves `false` once the queue is closed (queued deltas are dropped). An
   * exception from `process` propagates; the delta counts as popped.
   */
  async drain(process: ProcessDelta<T>): Promise<boolean> {
    while (this.#items.length === 0) {
      if (this.#closed) return false;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    // Synchronous on purpose: one await per delta would cost more than the processing itself.
    for (let delta = this.#items.shift(); delta !== undefined && !this.#closed; delta = this.#items.shift()) {
      const queued = this.#queued.get(delta.key);
      if (queued !== undefined && --queued.count === 0) this.#queued.delete(delta.key);
      const isInInitialList = !this.hasSynced();
      try {
        process(delta, isInInitialList);
      } finally {
        if (this.#initialPopulationCount > 0) this.#initialPopulationCount -= 1;
      }
    }
    return !this.#closed;
  }

  /** Stops the queue: pending and future `drain` calls resolve `false`. */
  close(): void {
    this.#closed = true;
    this.#notify();
  }

  #push(delta: Delta<T>): void {
    this.#items.push(delta);
    const queued = this.#queued.get(delta.key);
    if (queued === undefined) this.#queued.set(delta.key, { count: 1, last: delta });
    else {
      queued.count += 1;
      queued.last = delta;
    }
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
