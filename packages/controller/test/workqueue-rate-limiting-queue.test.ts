import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { RateLimitingQueue } from '../src/workqueue/rate-limiting-queue.ts';

describe('RateLimitingQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Time from `addRateLimited` until the item is queued; gives up after a minute. */
  function requeueDelay(queue: RateLimitingQueue, item: string): number {
    const start = Date.now();
    queue.addRateLimited(item);
    while (queue.len() === 0 && Date.now() - start < 60_000) vi.advanceTimersByTime(1);
    return Date.now() - start;
  }

  /** Takes the next item and finishes it, as a worker would. */
  async function finishNext(queue: RateLimitingQueue): Promise<void> {
    const next = await queue.get();
    if (!next.shutdown) queue.done(next.item);
  }

  it('re-adds a failing item after exponentially growing delays, up to the cap', async () => {
    const queue = new RateLimitingQueue({ rateLimiter: new ItemExponentialFailureRateLimiter(10, 50) });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      delays.push(requeueDelay(queue, 'a'));
      await finishNext(queue);
    }
    expect(delays).toEqual([10, 20, 40, 50, 50]);
    expect(queue.numRequeues('a')).toBe(5);
  });

  it('forget clears the failure history but leaves the item queued', async () => {
    const queue = new RateLimitingQueue({ rateLimiter: new ItemExponentialFailureRateLimiter(10, 1000) });
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    vi.advanceTimersByTime(20);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
    expect(queue.len()).toBe(1);
    await finishNext(queue);
    expect(requeueDelay(queue, 'a')).toBe(10);
  });

  it('uses the default controller limiter when none is given', () => {
    const queue = new RateLimitingQueue();
    expect(requeueDelay(queue, 'a')).toBe(5);
    expect(queue.numRequeues('a')).toBe(1);
  });
});
