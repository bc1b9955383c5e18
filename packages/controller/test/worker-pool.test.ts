import { describe, expect, it } from 'vitest';
import { settle } from '../src/testing/wait.ts';
import { createLogger } from '../src/util/logger.ts';
import { WorkQueue } from '../src/workqueue/queue.ts';
import { runWorkers } from '../src/workqueue/worker-pool.ts';

/** A promise settled from outside, to hold a worker inside `process`. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Waits until `condition` holds, yielding to the event loop; fails after `attempts` turns. */
async function until(condition: () => boolean, attempts = 1000): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (condition()) return;
    await settle(1);
  }
  throw new Error('condition not met');
}

describe('runWorkers', () => {
  it('lets timers run while items that re-add themselves at once keep the queue full', async () => {
    const queue = new WorkQueue();
    const stop = new AbortController();
    let passes = 0;
    const pool = runWorkers(
      queue,
      2,
      async (item) => {
        passes++;
        // As an item abandoned while the Lease is unconfirmed: back on the queue, no I/O awaited.
        queue.add(item);
      },
      { signal: stop.signal },
    );
    queue.add('a');
    queue.add('b');
    // Without the workers yielding, this timer never fires and the test times out.
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop.abort();
    await pool;
    expect(passes).toBeGreaterThan(2);
  });

  it('processes every item with at most N at once, and resolves after shutdown', async () => {
    const queue = new WorkQueue();
    const release = gate();
    let running = 0;
    let peak = 0;
    const processed: string[] = [];
    const pool = runWorkers(queue, 3, async (item) => {
      running++;
      peak = Math.max(peak, running);
      await release.promise;
      processed.push(item);
      running--;
    });
    for (const item of ['a', 'b', 'c', 'd', 'e']) queue.add(item);
    await until(() => running === 3);
    release.open();
    queue.shutDown();
    await pool;
    expect(peak).toBe(3);
    expect(processed.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('processes an item re-added during its processing again afterwards, never concurrently', async () => {
    const queue = new WorkQueue();
    const calls: string[] = [];
    const pool = runWorkers(queue, 4, async (item) => {
      calls.push(`start ${item}`);
      if (calls.length === 1) queue.add(item);
      await settle(1);
      calls.push(`end ${item}`);
    });
    queue.add('a');
    await until(() => calls.length === 4);
    queue.shutDown();
    await pool;
    expect(calls).toEqual(['start a', 'end a', 'start a', 'end a']);
  });

  it('logs an error thrown by process, marks the item done and keeps working', async () => {
    const queue = new WorkQueue();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line)) });
    const processed: string[] = [];
    const pool = runWorkers(
      queue,
      1,
      async (item) => {
        if (item === 'bad') throw new Error('boom');
        processed.push(item);
      },
      { logger },
    );
    queue.add('bad');
    queue.add('good');
    await until(() => processed.length === 1);
    queue.add('bad');
    await until(() => lines.length === 2);
    queue.shutDown();
    await pool;
    expect(processed).toEqual(['good']);
    expect(lines[0]).toMatchObject({ level: 'error', item: 'bad', err: { message: 'boom' } });
  });

  it('stops taking items when the signal aborts, leaving the rest queued', async () => {
    const queue = new WorkQueue();
    const controller = new AbortController();
    const release = gate();
    const signals: AbortSignal[] = [];
    const pool = runWorkers(
      queue,
      2,
      async (_item, signal) => {
        signals.push(signal);
        await release.promise;
      },
      { signal: controller.signal },
    );
    for (const item of ['a', 'b', 'c']) queue.add(item);
    await until(() => signals.length === 2);
    controller.abort();
    release.open();
    await pool;
    expect(signals).toEqual([controller.signal, controller.signal]);
    expect(queue.len()).toBe(1);
    expect(queue.shuttingDown()).toBe(false);
  });

  it('resolves at once for idle workers when the signal aborts', async () => {
    const queue = new WorkQueue();
    const controller = new AbortController();
    const pool = runWorkers(queue, 2, async () => {}, { signal: controller.signal });
    controller.abort();
    await pool;
    queue.add('a');
    expect(queue.len()).toBe(1);
  });
});
