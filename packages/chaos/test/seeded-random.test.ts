import { describe, expect, it } from 'vitest';
import { seededRandom } from '../src/seeded-random.ts';

describe('seededRandom', () => {
  it('replays the same sequence for the same seed, and another for another seed', () => {
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 5 }, () => random.integer(0, 1000));
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('stays in range', () => {
    const random = seededRandom(7);
    const values = Array.from({ length: 1000 }, () => random.integer(3, 5));
    expect(new Set(values)).toEqual(new Set([3, 4, 5]));
    expect(Array.from({ length: 1000 }, () => random.next()).every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
