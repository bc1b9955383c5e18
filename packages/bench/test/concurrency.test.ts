import { describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../src/concurrency.ts';

/** A promise the test settles by hand. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve = (): void => {};
  let reject = (_err: Error): void => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('forEachConcurrently', () => {
  it('never has more than the limit in flight and starts items in order', async () => {
    const started: number[] = [];
    let inFlight = 0;
    let most = 0;
    await forEachConcurrently([0, 1, 2, 3, 4, 5, 6], 3, async (item) => {
      started.push(item);
      inFlight++;
      most = Math.max(most, inFlight);
      await Promise.resolve();
      inFlight--;
    });
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
  });

  it('starts the next item as soon as one finishes', async () => {
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const done = forEachConcurrently([0, 1, 2], 2, async (index) => {
      started.push(index);
      await gates[index]?.promise;
    });
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    gates[1]?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.resolve();
    gates[2]?.resolve();
    await done;
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    const run = forEachConcurrently([0, 1, 2, 3], 1, async (index) => {
      started.push(index);
      if (index === 1) throw new Error('boom');
    });
    await expect(run).rejects.toThrow('boom');
    expect(started).toEqual([0, 1]);
  });

  it('refuses a concurrency below one', async () => {
    await expect(forEachConcurrently([1], 0, async () => {})).rejects.toThrow(RangeError);
  });
});
