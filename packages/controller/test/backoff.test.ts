import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Backoff, jitter } from '../src/util/backoff.ts';

function steps(backoff: Backoff, count: number): number[] {
  return Array.from({ length: count }, () => backoff.next());
}

describe('Backoff', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts at initial and multiplies by factor up to the cap', () => {
    const backoff = new Backoff({ initial: 800, factor: 2, cap: 30_000 });
    expect(steps(backoff, 8)).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  });

  it('doubles by default and stays constant with factor 1', () => {
    expect(steps(new Backoff({ initial: 10 }), 3)).toEqual([10, 20, 40]);
    expect(steps(new Backoff({ initial: 10, factor: 1 }), 3)).toEqual([10, 10, 10]);
  });

  it('adds up to jitter × delay on top of the capped delay', () => {
    const random = vi.fn().mockReturnValueOnce(0).mockReturnValueOnce(0.5).mockReturnValue(0.999);
    const backoff = new Backoff({ initial: 1000, jitter: 1, cap: 2000, random });
    expect(steps(backoff, 3)).toEqual([1000, 3000, 3998]);
  });

  it('starts over after resetAfter without a step', () => {
    const backoff = new Backoff({ initial: 100, resetAfter: 60_000 });
    expect(steps(backoff, 2)).toEqual([100, 200]);
    vi.advanceTimersByTime(60_000);
    expect(backoff.next()).toBe(400);
    vi.advanceTimersByTime(60_001);
    expect(backoff.next()).toBe(100);
  });

  it('starts over on reset', () => {
    const backoff = new Backoff({ initial: 100 });
    steps(backoff, 3);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('rejects invalid parameters', () => {
    expect(() => new Backoff({ initial: -1 })).toThrow(/initial/);
    expect(() => new Backoff({ initial: 1, factor: 0.5 })).toThrow(/factor/);
    expect(() => new Backoff({ initial: 1, jitter: -1 })).toThrow(/jitter/);
  });
});

describe('jitter', () => {
  it('adds a random share of up to factor × duration', () => {
    expect(jitter(2000, 1.2, () => 0.5)).toBe(3200);
    expect(jitter(2000, 1.2, () => 0)).toBe(2000);
  });

  it('leaves the duration unchanged with factor 0', () => {
    expect(jitter(2000, 0, () => 0.5)).toBe(2000);
  });
});
