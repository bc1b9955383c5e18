/**
 * One work item of the claim or volume queue: sync under an optional deadline,
 * then forget on success, requeue rate-limited below the failure threshold, or give up at it. The
 * worker pool calls `done`.
 */
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { OperationContext } from '../provisioner.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { withDeadline } from './deadline.ts';
import type { WorkFence } from './work-fence.ts';

/**
 * How long an abandoned item waits before it is tried again. While the term has lapsed but not ended
 * (a renewal is overdue), every attempt is abandoned at its first `assertLeader`: re-adding at once
 * would spin a core until the renewal comes.
 */
export const abandonedRetryDelayMs = 500;

/** How one queue's items are processed. */
export interface WorkItemConfig {
  /** `claim` or `volume`, for log lines. */
  readonly kind: string;
  readonly queue: RateLimitingQueue;
  /** Requeues before giving up; 0 = never give up. */
  readonly threshold: number;
  /** Deadline of one item; 0 = none. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborted when in-flight work must stop (hard stop, Lease lost or lapsed). */
  readonly signal: AbortSignal;
  readonly fence: WorkFence;
  readonly sync: (key: string, context: OperationContext) => Promise<void>;
  /** Called when the item is forgotten for good (success) or given up. */
  readonly onFinished?: (key: string) => void;
}

/**
 * Processes `key` once. Never rejects. An item abandoned because the controller is stopping or its
 * leadership lapsed counts no failure and is tried again after {@link abandonedRetryDelayMs}, for as
 * long as it takes the term to come back.
 */
export async function processWorkItem(config: WorkItemConfig, key: string): Promise<void> {
  const { kind, queue, threshold, logger, fence } = config;
  // Outlives the item: a background operation calls it when it ends (a plain add, no back-off).
  const requeue = (): void => queue.add(key);
  try {
    await withDeadline(config.clock, config.timeoutMs, config.signal, (signal) =>
      config.sync(key, { signal, logger, assertLeader: fence.assertLeader, requeue }),
    );
  } catch (err) {
    if (isLeadershipLapsedError(err) || fence.abandoned()) {
      // Kept for the next leadership term of this process (ignored once the queue shuts down).
      logger.debug({ key, err }, `Abandoned syncing ${kind}: stopping or no longer leading`);
      queue.addAfter(key, abandonedRetryDelayMs);
      return;
    }
    const failures = queue.numRequeues(key);
    if (threshold === 0 || failures < threshold) {
      logger.info({ key, failures, threshold, err }, `Retrying syncing ${kind}`);
      queue.addRateLimited(key);
    } else {
      // Not forgotten: the failure count survives, and the next informer resync or update of the
      // object adds it once more (Go behaviour, sig-storage-lib#115).
      logger.error(
        { key, failures, threshold, err },
        `Giving up syncing ${kind} because failures >= threshold`,
      );
      config.onFinished?.(key);
    }
    return;
  }
  queue.forget(key);
  config.onFinished?.(key);
}
