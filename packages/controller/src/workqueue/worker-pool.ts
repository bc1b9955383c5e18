/**
 * N async workers on one queue, each looping `get → process → done`. The pool is generic: whether a
 * failed item is retried or forgotten is the process function's decision.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Logger, silentLogger } from '../util/logger.ts';
import type { WorkQueue } from './queue.ts';

/** Handles one item. The signal is the pool's; a thrown error is logged and the item is `done`. */
export type ProcessItem = (item: string, signal: AbortSignal) => Promise<void>;

/** Options of {@link runWorkers}. */
export interface WorkerPoolOptions {
  /**
   * Stops the workers: each finishes its current item and takes no more; queued items stay queued.
   * Passed to every `processItem` call. Default: the workers run until the queue is shut down and empty.
   */
  signal?: AbortSignal;
  /** Where errors thrown by `processItem` are logged. Default {@link silentLogger}. */
  logger?: Logger;
}

/**
 * How long a worker may take items without letting the event loop turn. Items that settle without
 * I/O (one that re-adds itself at once, as an item abandoned while the Lease is unconfirmed does)
 * would otherwise chain promise reactions forever, and no timer, such as the Lease renewal that
 * would end it, ever ran.
 */
const turnEveryMs = 10;

/**
 * Runs `workers` loops on `queue`. Resolves once every worker has exited: after the queue is shut down
 * and empty, or after `signal` aborts.
 */
export async function runWorkers(
  queue: WorkQueue,
  workers: number,
  processItem: ProcessItem,
  options: WorkerPoolOptions = {},
): Promise<void> {
  const signal = options.signal ?? new AbortController().signal;
  const logger = options.logger ?? silentLogger;

  const work = async (): Promise<void> => {
    let turnedAt = performance.now();
    while (!signal.aborted) {
      if (performance.now() - turnedAt >= turnEveryMs) {
        await nextTurn();
        turnedAt = performance.now();
      }
      // `get` rejects only when the signal aborts.
      const next = await queue.get(signal).catch(() => undefined);
      if (next === undefined || next.shutdown) return;
      try {
        await processItem(next.item, signal);
      } catch (err) {
        logger.error({ err, queue: queue.name, item: next.item }, 'work queue item failed');
      } finally {
        queue.done(next.item);
      }
    }
  };

  await Promise.all(Array.from({ length: workers }, work));
}
