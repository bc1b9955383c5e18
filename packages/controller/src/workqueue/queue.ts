/**
 * The basic work queue, with client-go semantics: a FIFO of keys with a `dirty` set (waiting to be
 * processed) and a `processing` set (held by a worker). A key is queued at most once, and never handed
 * to two workers at once: one re-added while processed comes back after {@link WorkQueue.done}.
 */
import type { Registry } from 'prom-client';
import { type Clock, realClock } from '../util/clock.ts';
import { Fifo } from './fifo.ts';
import { QueueMetrics } from './metrics.ts';

/** How often the unfinished-work gauges are refreshed while items are being processed. */
const unfinishedWorkInterval = 500;

/** Options shared by every work queue. */
export interface WorkQueueOptions {
  /** Queue name, the `name` label of its metrics. Default `''`. */
  name?: string;
  /** Time source for delays and metrics. Default {@link realClock}. */
  clock?: Clock;
  /** Where the `workqueue_*` metrics are recorded. Default: no metrics. */
  registry?: Registry;
}

/** What {@link WorkQueue.get} hands out: an item, or the news that the queue is shut down and empty. */
export type GetResult = { item: string; shutdown: false } | { item?: undefined; shutdown: true };

type Waiter = (result: GetResult) => void;

const shutdownResult: GetResult = Object.freeze({ shutdown: true });

/** A de-duplicating FIFO of keys for async workers. */
export class WorkQueue {
  readonly name: string;
  protected readonly clock: Clock;
  /** Queued keys in order; a key is queued at most once (`add` ignores a dirty key). */
  readonly #queue = new Fifo<string>();
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** Pending `get` calls, oldest first; non-empty only while the queue is empty. */
  readonly #waiters = new Set<Waiter>();
  /** Pending `shutDownWithDrain` calls. */
  readonly #drainWaiters: Array<() => void> = [];
  /** Metrics recorder; `undefined` without a registry. */
  protected readonly metrics: QueueMetrics | undefined;
  #metricsTimerArmed = false;
  #shuttingDown = false;
  #drain = false;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.metrics = options.registry && new QueueMetrics(options.registry, this.name, this.clock);
  }

  /**
   * Marks `item` as needing processing. Ignored after shutdown, and while `item` already waits. An
   * item being processed is queued again only when its worker calls {@link done}.
   */
  add(item: string): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.metrics?.add(item);
    this.#dirty.add(item);
    if (!this.#processing.has(item)) this.#enqueue(item);
  }

  /**
   * Waits for an item and marks it as being processed; the caller must call {@link done} with it.
   * Items still queued at shutdown are handed out; only an empty, shut-down queue answers
   * `shutdown: true`. Rejects with the signal's reason when `signal` aborts first.
   */
  get(signal?: AbortSignal): Promise<GetResult> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const head = this.#queue.shift();
    if (head !== undefined) {
      this.#take(head);
      return Promise.resolve({ item: head, shutdown: false });
    }
    if (this.#shuttingDown) return Promise.resolve(shutdownResult);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = (result) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Ends processing of `item`. If it was added again meanwhile, it is queued again. Ignored for an
   * item that is not being processed.
   */
  done(item: string): void {
    if (!this.#processing.delete(item)) return;
    this.metrics?.done(item);
    if (this.#dirty.has(item)) this.#enqueue(item);
    this.#settleDrain();
  }

  /** Number of queued items, not counting those being processed. */
  len(): number {
    return this.#queue.size;
  }

  /** Stops accepting items and wakes every waiting `get`. Also ends a pending {@link shutDownWithDrain}. */
  shutDown(): void {
    this.#drain = false;
    this.#markShutDown();
    this.#settleDrain();
  }

  /**
   * Like {@link shutDown}, then resolves once no item is being processed (workers must call
   * {@link done}), or when {@link shutDown} is called.
   */
  shutDownWithDrain(): Promise<void> {
    this.#drain = true;
    this.#markShutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** Whether shutdown has been requested. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Hands `item` to the oldest waiting `get`, or queues it. */
  #enqueue(item: string): void {
    const [waiter] = this.#waiters;
    if (waiter === undefined) {
      this.#queue.push(item);
      return;
    }
    this.#waiters.delete(waiter);
    this.#take(item);
    waiter({ item, shutdown: false });
  }

  #take(item: string): void {
    this.#dirty.delete(item);
    this.#processing.add(item);
    this.metrics?.get(item);
    this.#scheduleMetricsUpdate();
  }

  #markShutDown(): void {
    this.#shuttingDown = true;
    for (const waiter of this.#waiters) waiter(shutdownResult);
    this.#waiters.clear();
  }

  /** Ends pending drains once nothing is processed, or at once after a plain shutdown. */
  #settleDrain(): void {
    if (this.#drain && this.#processing.size > 0) return;
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
  }

  /**
   * Keeps the unfinished-work gauges fresh while work is in progress. Idle or shut-down queues keep no
   * timer; the last refresh after the final `done` brings the gauges back to zero.
   */
  #scheduleMetricsUpdate(): void {
    const metrics = this.metrics;
    if (metrics === undefined || this.#metricsTimerArmed) return;
    this.#metricsTimerArmed = true;
    this.clock.setTimer(() => {
      this.#metricsTimerArmed = false;
      if (this.#shuttingDown) return;
      metrics.updateUnfinishedWork();
      if (this.#processing.size > 0) this.#scheduleMetricsUpdate();
    }, unfinishedWorkInterval);
  }
}
