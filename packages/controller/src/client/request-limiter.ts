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
 * Default limit of one API client: 50 QPS, burst 100, as the kubelet (since 1.27) and
 * kube-scheduler ship. client-go's 5/10 caps a provisioner at about 4 volumes/s, and 20/30
 * (controller-runtime's old default) at 20: a PV create per claim and a delete per released
 * volume are the whole write load of a provisioner, and its work queues already pace retries, so a
 * low client limit only adds queueing in front of an API server with room to spare. The server
 * protects itself with API Priority and Fairness.
 */
export const defaultRateLimit: RateLimit = Object.freeze({ qps: 50, burst: 100 });

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
