/**
 * A small seeded pseudo-random generator (mulberry32), so a chaos run's kill points and fault times
 * can be replayed from the seed it prints.
 */

/** Uniform numbers in `[0, 1)` from a seed. */
export interface SeededRandom {
  readonly seed: number;
  /** The next number in `[0, 1)`. */
  next(): number;
  /** An integer in `[min, max]`. */
  integer(min: number, max: number): number;
}

/** A generator for `seed` (any 32-bit unsigned integer). */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    seed: seed >>> 0,
    next,
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
  };
}

/** A fresh seed for a run that was given none. */
export function freshSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0] ?? 1;
}
