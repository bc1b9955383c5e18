/**
 * Rate limiters for {@link RateLimitingQueue}, with client-go `workqueue` semantics. Delays are
 * milliseconds.
 */
import { type Clock, realClock } from '../util/clock.ts';
import { TokenBucket } from '../util/token-bucket.ts';

/** Decides how long an item waits before it is re-queued. */
export interface RateLimiter {
  /** The delay before `item` is added again; records one more failure of `item`. */
  when(item: string): number;
  /** Clears the failure history of `item` (it stays wherever it is in the queue). */
  forget(item: string): void;
  /** How many failures of `item` are recorded. */
  numRequeues(item: string): number;
}

/** Failure counts per item, shared by the per-item limiters. */
class FailureCounts {
  readonly #counts = new Map<string, number>();

  /** Records one failure and returns the count before it. */
  increment(item: string): number {
    const previous = this.get(item);
    this.#counts.set(item, previous + 1);
    return previous;
  }

  get(item: string): number {
    return this.#counts.get(item) ?? 0;
  }

  delete(item: string): void {
    this.#counts.delete(item);
  }
}

/**
 * Per-item exponential backoff: `base × 2^n` where `n` is the number of earlier failures of the item,
 * capped at `max` (overflow also gives `max`). The first call returns `base`.
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #base: number;
  readonly #max: number;
  readonly #failures = new FailureCounts();

  constructor(base: number, max: number) {
    this.#base = base;
    this.#max = max;
  }

  when(item: string): number {
    const delay = this.#base * 2 ** this.#failures.increment(item);
    return Number.isFinite(delay) && delay <= this.#max ? delay : this.#max;
  }

  forget(item: string): void {
    this.#failures.delete(item);
  }

  numRequeues(item: string): number {
    return this.#failures.get(item);
  }
}

/** `fast` for the first `maxFast` failures of an item, `slow` after that. */
export class ItemFastSlowRateLimiter implements RateLimiter {
  readonly #fast: number;
  readonly #slow: number;
  readonly #maxFast: number;
  readonly #failures = new FailureCounts();

  constructor(fast: number, slow: number, maxFast: number) {
    this.#fast = fast;
    this.#slow = slow;
    this.#maxFast = maxFast;
  }

  when(item: string): number {
    return this.#failures.increment(item) < this.#maxFast ? this.#fast : this.#slow;
  }

  forget(item: string): void {
    this.#failures.delete(item);
  }

  numRequeues(item: string): number {
    return this.#failures.get(item);
  }
}

/**
 * One token bucket shared by all items: every call takes a token and waits until it exists. Keeps no
 * per-item history, so `numRequeues` is always 0.
 */
export class BucketRateLimiter implements RateLimiter {
  readonly #bucket: TokenBucket;

  constructor(qps: number, burst: number, clock: Clock = realClock) {
    this.#bucket = new TokenBucket(qps, burst, clock);
  }

  when(): number {
    return this.#bucket.reserve();
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The largest delay and requeue count of its children; `forget` reaches every child. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(item: string): number {
    // Every child is asked, so each records the failure and the bucket spends its token.
    return this.#limiters.reduce((max, limiter) => Math.max(max, limiter.when(item)), 0);
  }

  forget(item: string): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  numRequeues(item: string): number {
    return this.#limiters.reduce((max, limiter) => Math.max(max, limiter.numRequeues(item)), 0);
  }
}

/** Caps the delays of `limiter` at `maxDelay`. */
export class WithMaxWaitRateLimiter implements RateLimiter {
  readonly #limiter: RateLimiter;
  readonly #maxDelay: number;

  constructor(limiter: RateLimiter, maxDelay: number) {
    this.#limiter = limiter;
    this.#maxDelay = maxDelay;
  }

  when(item: string): number {
    return Math.min(this.#limiter.when(item), this.#maxDelay);
  }

  forget(item: string): void {
    this.#limiter.forget(item);
  }

  numRequeues(item: string): number {
    return this.#limiter.numRequeues(item);
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: per-item exponential backoff from 5 ms to 1000 s, and
 * an overall bucket of 10 qps with burst 100.
 */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new BucketRateLimiter(10, 100, clock),
  );
}
