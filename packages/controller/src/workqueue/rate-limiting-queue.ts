/**
 * A delaying queue whose retry delays come from a {@link RateLimiter}, with client-go semantics.
 */
import { DelayingQueue } from './delaying-queue.ts';
import type { WorkQueueOptions } from './queue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';

/** Options of {@link RateLimitingQueue}. */
export interface RateLimitingQueueOptions extends WorkQueueOptions {
  /** Default {@link defaultControllerRateLimiter} on the queue's clock. */
  rateLimiter?: RateLimiter;
}

/** A {@link DelayingQueue} whose retries wait as long as its {@link RateLimiter} says (`addRateLimited`). */
export class RateLimitingQueue extends DelayingQueue {
  readonly #limiter: RateLimiter;

  constructor(options: RateLimitingQueueOptions = {}) {
    super(options);
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
  }

  /** Adds `item` once the rate limiter allows it, recording one more failure of `item`. */
  addRateLimited(item: string): void {
    this.addAfter(item, this.#limiter.when(item));
  }

  /** Clears the failure history of `item`; it is not removed from the queue. */
  forget(item: string): void {
    this.#limiter.forget(item);
  }

  /** How many failures of `item` the rate limiter has recorded. */
  numRequeues(item: string): number {
    return this.#limiter.numRequeues(item);
  }
}
