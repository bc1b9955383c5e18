import { describe, expect, it } from 'vitest';
import { percentile, summarizeLatencies } from '../src/percentiles.ts';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, index) => index + 1);

  it('returns a value of the sample, never an interpolation', () => {
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
  });

  it('picks the p-th of a hundred values exactly', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });

  it('gives the only value for every percentile of a single sample', () => {
    expect(percentile([7], 1)).toBe(7);
    expect(percentile([7], 100)).toBe(7);
  });

  it('refuses an empty sample and percentiles outside (0, 100]', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('summarizeLatencies', () => {
  it('sorts its input and rounds to whole milliseconds', () => {
    const values = Array.from({ length: 200 }, (_, index) => 200 - index + 0.4);
    expect(summarizeLatencies(values)).toEqual({ p50: 100, p95: 190, p99: 198, max: 200 });
  });

  it('reports a single slow claim as the max but not the p99 of 1000', () => {
    const values = [...Array.from({ length: 999 }, () => 100), 5000];
    expect(summarizeLatencies(values)).toEqual({ p50: 100, p95: 100, p99: 100, max: 5000 });
  });
});
