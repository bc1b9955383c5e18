/** The rate limiters of the claim and volume queues, and the API throttles of the Lease and events. */
import type { KubeApiClient } from '../client/kube-api.ts';
import type { RateLimit } from '../client/request-limiter.ts';
import type { KubeApi } from '../client/resource-client.ts';
import type { Clock } from '../util/clock.ts';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from '../workqueue/rate-limiters.ts';
import type { ResolvedOptions } from './resolve-options.ts';

/** The two queue limiters: the user's factory, or Go's default; one instance per queue unless shared. */
export function queueLimiters(options: ResolvedOptions, clock: Clock): [RateLimiter, RateLimiter] {
  const { rateLimiter, exponentialBackOffOnError, separateQueueLimiters } = options;
  const create =
    rateLimiter ??
    ((): RateLimiter =>
      new MaxOfRateLimiter(
        new ItemExponentialFailureRateLimiter(15_000, exponentialBackOffOnError ? 1_000_000 : 15_000),
        new BucketRateLimiter(10, 100, clock),
      ));
  const first = create();
  return [first, separateQueueLimiters ? create() : first];
}

/**
 * `api` with a throttle of its own when it can make one (a {@link KubeApiClient}), else `api` itself.
 * The Lease needs one so that a burst of provisioning work queued on the shared throttle cannot delay
 * renewals until the Lease is lost; the event recorder so that events never delay PV writes.
 */
export function withOwnRateLimit(api: KubeApi, limit: RateLimit): KubeApi {
  const { withRateLimit } = api as Partial<KubeApiClient>;
  return typeof withRateLimit === 'function' ? withRateLimit.call(api, limit) : api;
}
