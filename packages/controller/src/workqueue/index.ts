/**
 * Client-go's work queues (a key is queued at most once and never handed to two workers at a time),
 * delayed and rate-limited adds, the rate limiters, and {@link runWorkers}.
 *
 * Stability: experimental. No package outside the controller imports this entry point; its names and
 * signatures may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export { DelayingQueue } from './delaying-queue.ts';
export { QueueMetrics } from './metrics.ts';
export type { GetResult, WorkQueueOptions } from './queue.ts';
export { WorkQueue } from './queue.ts';
export type { RateLimiter } from './rate-limiters.ts';
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from './rate-limiters.ts';
export type { RateLimitingQueueOptions } from './rate-limiting-queue.ts';
export { RateLimitingQueue } from './rate-limiting-queue.ts';
export type { ProcessItem, WorkerPoolOptions } from './worker-pool.ts';
export { runWorkers } from './worker-pool.ts';
