import { describe, expect, it } from 'vitest';
import { settle } from '../src/testing/wait.ts';
import { type GetResult, WorkQueue } from '../src/workqueue/queue.ts';

/** Takes every queued item without waiting. */
async function takeAll(queue: WorkQueue): Promise<string[]> {
  const items: string[] = [];
  while (queue.len() > 0) {
    const { item, shutdown } = await queue.get();
    if (!shutdown) items.push(item);
  }
  return items;
}

/** Records the result of `promise` once it settles. */
function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('WorkQueue', () => {
  it('hands items out in the order they were added', async () => {
    const queue = new WorkQueue();
    for (const item of ['a', 'b', 'c']) queue.add(item);
    expect(await takeAll(queue)).toEqual(['a', 'b', 'c']);
  });

  it('queues an item added many times while waiting only once', async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 5; i++) queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await takeAll(queue)).toEqual(['a', 'b']);
  });

  it('holds back an item added while it is processed until done, then hands it out once', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const first = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const waiting = track(queue.get());
    await settle();
    expect(waiting.settled).toBe(false);

    queue.done('a');
    await settle();
    expect(first).toEqual({ item: 'a', shutdown: false });
    expect(waiting.value).toEqual({ item: 'a', shutdown: false });
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('does not queue an item again at done when it was not re-added', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    await queue.get();
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('ignores done for an item that is not being processed', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.done('a');
    queue.done('b');
    expect(await takeAll(queue)).toEqual(['a']);
  });

  it('counts only queued items in len, not those being processed', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    await queue.get();
    expect(queue.len()).toBe(1);
  });

  it('makes get wait for an add, serving waiting gets first come, first served', async () => {
    const queue = new WorkQueue();
    const first = track(queue.get());
    const second = track(queue.get());
    await settle();
    expect(first.settled).toBe(false);

    queue.add('a');
    await settle();
    expect(first.value).toEqual({ item: 'a', shutdown: false });
    expect(second.settled).toBe(false);

    queue.add('b');
    await settle();
    expect(second.value).toEqual({ item: 'b', shutdown: false });
  });

  it('never hands one item to two concurrent workers', async () => {
    const queue = new WorkQueue();
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    let processed = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const next = await queue.get();
        if (next.shutdown) return;
        if (inFlight.has(next.item)) overlaps.push(next.item);
        inFlight.add(next.item);
        // Re-add while processing, as an informer event would, and yield so others run meanwhile.
        if (processed++ % 3 === 0) queue.add(next.item);
        await settle();
        inFlight.delete(next.item);
        queue.done(next.item);
      }
    };
    const workers = Promise.all([worker(), worker(), worker(), worker()]);
    for (let round = 0; round < 20; round++) {
      for (const item of ['a', 'b', 'c']) queue.add(item);
      await settle();
    }
    queue.shutDown();
    await workers;
    expect(overlaps).toEqual([]);
    expect(processed).toBeGreaterThan(20);
  });

  describe('shutDown', () => {
    it('ignores adds after shutdown', async () => {
      const queue = new WorkQueue();
      queue.shutDown();
      queue.add('a');
      expect(queue.len()).toBe(0);
      expect(await queue.get()).toEqual({ shutdown: true });
    });

    it('still hands out items queued before shutdown, then reports shutdown', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      queue.add('b');
      queue.shutDown();
      expect(queue.shuttingDown()).toBe(true);
      expect(await queue.get()).toEqual({ item: 'a', shutdown: false });
      expect(await queue.get()).toEqual({ item: 'b', shutdown: false });
      expect(await queue.get()).toEqual({ shutdown: true });
    });

    it('wakes every waiting get with shutdown', async () => {
      const queue = new WorkQueue();
      const waiting = [queue.get(), queue.get()];
      queue.shutDown();
      expect(await Promise.all(waiting)).toEqual([{ shutdown: true }, { shutdown: true }]);
    });

    it('re-queues at done an item re-added before shutdown', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      await queue.get();
      queue.add('a');
      queue.shutDown();
      queue.done('a');
      expect(await queue.get()).toEqual({ item: 'a', shutdown: false });
    });
  });

  describe('shutDownWithDrain', () => {
    it('resolves at once when nothing is being processed', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      await queue.shutDownWithDrain();
      expect(queue.shuttingDown()).toBe(true);
      expect(queue.len()).toBe(1);
    });

    it('waits until every item being processed is done', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      queue.add('b');
      await queue.get();
      await queue.get();
      const drained = track(queue.shutDownWithDrain());
      queue.done('a');
      await settle();
      expect(drained.settled).toBe(false);
      queue.done('b');
      await settle();
      expect(drained.settled).toBe(true);
    });

    it('is ended early by shutDown', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      await queue.get();
      const drained = track(queue.shutDownWithDrain());
      await settle();
      expect(drained.settled).toBe(false);
      queue.shutDown();
      await settle();
      expect(drained.settled).toBe(true);
    });
  });

  describe('get with a signal', () => {
    it('rejects with the reason when the signal aborts while waiting', async () => {
      const queue = new WorkQueue();
      const controller = new AbortController();
      const waiting = queue.get(controller.signal);
      controller.abort(new Error('stop'));
      await expect(waiting).rejects.toThrow('stop');
    });

    it('rejects at once for an already aborted signal, leaving queued items in place', async () => {
      const queue = new WorkQueue();
      queue.add('a');
      await expect(queue.get(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
      expect(queue.len()).toBe(1);
    });

    it('does not lose an item to an aborted waiter', async () => {
      const queue = new WorkQueue();
      const controller = new AbortController();
      const aborted = queue.get(controller.signal).catch(() => 'aborted');
      const next: Promise<GetResult> = queue.get();
      controller.abort();
      queue.add('a');
      expect(await aborted).toBe('aborted');
      expect(await next).toEqual({ item: 'a', shutdown: false });
    });
  });
});
