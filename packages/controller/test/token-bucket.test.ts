import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { TokenBucket } from '../src/util/token-bucket.ts';

describe('TokenBucket', () => {
  it('starts full: the first `burst` reservations are immediate', () => {
    const bucket = new TokenBucket(10, 3, new ManualClock());
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
  });

  it('borrows future tokens: delays grow by 1/qps per reservation once empty', () => {
    const bucket = new TokenBucket(10, 1, new ManualClock());
    expect(bucket.reserve()).toBe(0);
    expect(bucket.reserve()).toBe(100);
    expect(bucket.reserve()).toBe(200);
  });

  it('refills continuously up to burst', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket(2, 2, clock);
    bucket.reserve();
    bucket.reserve();
    expect(bucket.tryTake()).toBe(false);
    clock.advance(500);
    expect(bucket.tryTake()).toBe(true);
    clock.advance(60_000);
    expect(bucket.available()).toBe(2);
  });

  it('never delays with infinite qps', () => {
    const bucket = new TokenBucket(Number.POSITIVE_INFINITY, 0, new ManualClock());
    for (let i = 0; i < 100; i++) expect(bucket.reserve()).toBe(0);
  });

  it('rejects invalid parameters', () => {
    expect(() => new TokenBucket(0, 1)).toThrow(/qps/);
    expect(() => new TokenBucket(1, 0)).toThrow(/burst/);
  });
});
