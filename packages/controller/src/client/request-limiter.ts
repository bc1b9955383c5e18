/**
 * Client-side throttling of API requests (client-go's QPS/burst), on the shared token bucket.
 */
import { type Clock, realClock, sleep } from '../util/clock.ts';
import { TokenBucket } from '../util/token-bucket.ts';

/** Requests per second and bucket size. `qps: Infinity` turns throttling off. */
export interface RateLimit {
  readonly qps: number;
  readonly burst: number;
}

/**
 * Default limit of one API client: 20 QPS, burst 30. client-go's 5/10 is tuned for the kubelet-era
 * default and makes a provisioner that sees many claims at once (a PV create, a claim update and an
 * event per claim) queue for tens of seconds; controller-runtime raised its defaults to 20/30 for the
 * same reason.
 */
export const defaultRateLimit: RateLimit = Object.freeze({ qps: 20, burst: 30 });

/** Hands out request permits at a {@link RateLimit}. One instance is shared by all calls it throttles. */
export class RequestLimiter {
  readonly #bucket: TokenBucket;
  readonly #clock: Clock;

  constructor(limit: RateLimit, clock: Clock = realClock) {
    this.#bucket = new TokenBucket(limit.qps, limit.burst, clock);
    this.#clock = clock;
  }

  /** Resolves when the request may be sent; rejects with the signal's reason when it aborts first. */
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const delay = this.#bucket.reserve();
    if (delay > 0) await sleep(this.#clock, delay, signal);
  }
}
