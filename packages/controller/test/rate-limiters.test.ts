import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  WithMaxWaitRateLimiter,
} from '../src/workqueue/rate-limiters.ts';

function delays(limiter: RateLimiter, item: string, count: number): number[] {
  return Array.from({ length: count }, () => limiter.when(item));
}

/** A limiter answering fixed delays and counts, recording forgets. */
function fixed(delay: number, requeues: number): RateLimiter & { forgotten: string[] } {
  const forgotten: string[] = [];
  return {
    forgotten,
    when: () => delay,
    forget: (item) => forgotten.push(item),
    numRequeues: () => requeues,
  };
}

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from base per failure of the item, capped at max', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 100);
    expect(delays(limiter, 'a', 7)).toEqual([5, 10, 20, 40, 80, 100, 100]);
    expect(limiter.numRequeues('a')).toBe(7);
  });

  it('gives the provisioner retry timeline: 15 s doubling to a 1000 s cap', () => {
    const limiter = new ItemExponentialFailureRateLimiter(15_000, 1_000_000);
    expect(delays(limiter, 'claim', 9).map((ms) => ms / 1000)).toEqual([
      15, 30, 60, 120, 240, 480, 960, 1000, 1000,
    ]);
  });

  it('tracks each item separately', () => {
    const limiter = new ItemExponentialFailureRateLimiter(1, 1000);
    delays(limiter, 'a', 3);
    expect(limiter.when('b')).toBe(1);
    expect(limiter.numRequeues('a')).toBe(3);
    expect(limiter.numRequeues('b')).toBe(1);
  });

  it('answers max when base × 2^n overflows', () => {
    const limiter = new ItemExponentialFailureRateLimiter(1, Number.MAX_VALUE);
    const all = delays(limiter, 'a', 1100);
    expect(all[1023]).toBe(2 ** 1023);
    expect(all.slice(1024).every((delay) => delay === Number.MAX_VALUE)).toBe(true);
  });

  it('forget restarts the item from base', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 100);
    delays(limiter, 'a', 3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('answers fast for the first maxFast failures, then slow', () => {
    const limiter = new ItemFastSlowRateLimiter(10, 1000, 2);
    expect(delays(limiter, 'a', 4)).toEqual([10, 10, 1000, 1000]);
    expect(limiter.numRequeues('a')).toBe(4);
    expect(limiter.when('b')).toBe(10);
  });

  it('forget restarts the item on fast delays', () => {
    const limiter = new ItemFastSlowRateLimiter(10, 1000, 1);
    delays(limiter, 'a', 2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(10);
  });
});

describe('BucketRateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a burst through, then spaces calls 1/qps apart across all items', () => {
    const limiter = new BucketRateLimiter(10, 2);
    expect([limiter.when(), limiter.when(), limiter.when(), limiter.when()]).toEqual([0, 0, 100, 200]);
  });

  it('refills over time', () => {
    const limiter = new BucketRateLimiter(10, 1);
    limiter.when();
    vi.advanceTimersByTime(100);
    expect(limiter.when()).toBe(0);
  });

  it('keeps no per-item history', () => {
    const limiter = new BucketRateLimiter(10, 1);
    limiter.when();
    limiter.forget();
    expect(limiter.numRequeues()).toBe(0);
  });
});

describe('MaxOfRateLimiter', () => {
  it('answers the largest delay and requeue count of its children', () => {
    const limiter = new MaxOfRateLimiter(fixed(5, 1), fixed(50, 3), fixed(20, 2));
    expect(limiter.when('a')).toBe(50);
    expect(limiter.numRequeues('a')).toBe(3);
  });

  it('asks every child, so each records the failure', () => {
    const exponential = new ItemExponentialFailureRateLimiter(1, 1000);
    const fastSlow = new ItemFastSlowRateLimiter(100, 1000, 5);
    const limiter = new MaxOfRateLimiter(exponential, fastSlow);
    expect(delays(limiter, 'a', 3)).toEqual([100, 100, 100]);
    expect(exponential.numRequeues('a')).toBe(3);
  });

  it('forwards forget to every child', () => {
    const children = [fixed(1, 0), fixed(2, 0)];
    new MaxOfRateLimiter(...children).forget('a');
    expect(children.map((child) => child.forgotten)).toEqual([['a'], ['a']]);
  });
});

describe('WithMaxWaitRateLimiter', () => {
  it('caps the inner delay and delegates the rest', () => {
    const inner = new ItemExponentialFailureRateLimiter(10, 10_000);
    const limiter = new WithMaxWaitRateLimiter(inner, 25);
    expect(delays(limiter, 'a', 3)).toEqual([10, 20, 25]);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(inner.numRequeues('a')).toBe(0);
  });
});

describe('defaultControllerRateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('backs an item off from 5 ms to a 1000 s cap', () => {
    const limiter = defaultControllerRateLimiter();
    const all = delays(limiter, 'a', 30);
    expect(all.slice(0, 3)).toEqual([5, 10, 20]);
    expect(all.at(-1)).toBe(1_000_000);
  });

  it('limits all items together to a burst of 100, then 10 per second', () => {
    const limiter = defaultControllerRateLimiter();
    const first = Array.from({ length: 100 }, (_, i) => limiter.when(`item-${i}`));
    expect(first.every((delay) => delay === 5)).toBe(true);
    expect(limiter.when('item-100')).toBe(100);
    expect(limiter.when('item-101')).toBe(200);
  });
});
