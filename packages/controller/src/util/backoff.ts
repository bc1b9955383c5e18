/**
 * Jittered exponential backoff with client-go's `wait.Backoff` step rules: each step returns the current
 * delay plus jitter, then multiplies the delay by `factor` up to `cap`. Jitter is added on top of the
 * capped delay, so a step may exceed `cap` by up to `jitter × cap`, as in Go.
 *
 * Pure: it computes delays and never waits; callers sleep on their own clock.
 */
import { type Clock, realClock } from './clock.ts';

/** Parameters of a {@link Backoff}. Durations are milliseconds. */
export interface BackoffOptions {
  /** First delay. */
  initial: number;
  /** Multiplier applied after each step. Default 2; 1 gives a constant delay. */
  factor?: number;
  /** Each step adds a uniformly random `[0, jitter × delay)`. Default 0 (no jitter). */
  jitter?: number;
  /** Ceiling of the un-jittered delay. Default: none. */
  cap?: number;
  /** A step taken more than this long after the previous one starts over from `initial`. Default: never. */
  resetAfter?: number;
  /** Measures `resetAfter`. Default {@link realClock}. */
  clock?: Clock;
  /** Uniform random source in `[0, 1)` for jitter. Default `Math.random`. */
  random?: () => number;
}

/**
 * The delay sequence of one retrying activity, e.g. the reflector's relist loop
 * (`initial` 800 ms, `factor` 2, `jitter` 1, `cap` 30 s, `resetAfter` 2 min).
 */
export class Backoff {
  readonly #initial: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #cap: number;
  readonly #resetAfter: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #current: number;
  #lastStep: number | undefined;

  constructor(options: BackoffOptions) {
    const { initial, factor = 2, jitter = 0, cap = Number.POSITIVE_INFINITY } = options;
    if (!(initial >= 0)) throw new RangeError(`backoff initial must be >= 0, got ${initial}`);
    if (!(factor >= 1)) throw new RangeError(`backoff factor must be >= 1, got ${factor}`);
    if (!(jitter >= 0)) throw new RangeError(`backoff jitter must be >= 0, got ${jitter}`);
    this.#initial = initial;
    this.#factor = factor;
    this.#jitter = jitter;
    this.#cap = cap;
    this.#resetAfter = options.resetAfter ?? Number.POSITIVE_INFINITY;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#current = Math.min(initial, cap);
  }

  /** The delay to wait before the next attempt; advances the sequence. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastStep !== undefined && now - this.#lastStep > this.#resetAfter) this.reset();
    this.#lastStep = now;
    const delay = this.#current;
    this.#current = Math.min(delay * this.#factor, this.#cap);
    return jitter(delay, this.#jitter, this.#random);
  }

  /** Starts the sequence over from `initial`, e.g. after a success. */
  reset(): void {
    this.#current = Math.min(this.#initial, this.#cap);
  }
}

/**
 * `ms` plus a uniformly random `[0, factor × ms)`, like Go's `wait.Jitter` (leader election retries
 * use factor 1.2). A factor of 0 returns `ms` unchanged.
 */
export function jitter(ms: number, factor: number, random: () => number = Math.random): number {
  return factor > 0 ? ms + random() * factor * ms : ms;
}
