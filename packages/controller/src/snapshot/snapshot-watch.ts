/**
 * Which `DirectorySnapshot` the leader works on, and when: an informer watches the snapshots (a new,
 * changed or deleted one is queued the moment the API server says so), one worker brings queued
 * snapshots forward one at a time, and a snapshot that could not be settled (its claim not Bound yet,
 * a copy that failed) is queued again after an exponential back-off. The informer's resync queues
 * every cached snapshot again now and then: the safety net for a change nothing announced.
 */
import { isNotFound } from '../client/api-error.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import { metaNamespaceKey } from '../informer/keys.ts';
import { SharedInformer } from '../informer/shared-informer.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { OperationContext } from '../provisioner.ts';
import { ItemExponentialFailureRateLimiter } from '../workqueue/rate-limiters.ts';
import { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { runWorkers } from '../workqueue/worker-pool.ts';
import type { DirectorySnapshot } from './directory-snapshot.ts';

/** What one pass over a snapshot came to: nothing more to do until it changes, or try again later. */
export type SnapshotSync = 'settled' | 'retry';

/** Timings of {@link watchSnapshots}, in milliseconds. */
export interface SnapshotWatchTimings {
  /** How often every snapshot is looked at again although nothing announced a change. Default 5 minutes. */
  readonly resyncIntervalMs?: number | undefined;
  /** First wait before a snapshot that could not be settled is tried again; doubles up to 1 minute. Default 1 s. */
  readonly retryBaseMs?: number | undefined;
}

/** What a change must touch to be acted on: a status write (this provisioner's own, mostly) is not. */
function watched(snapshot: Readonly<DirectorySnapshot>): string {
  const { generation, deletionTimestamp, finalizers, annotations } = snapshot.metadata ?? {};
  return JSON.stringify([snapshot.spec, generation, deletionTimestamp, finalizers, annotations]);
}

/**
 * Whether an update from `before` to `after` is acted on: a resync (the same version again), or a
 * change beyond the status. Acting on status writes would retry a failed copy at once, its back-off
 * skipped, each time the failure's message changed.
 */
export function needsSync(before: Readonly<DirectorySnapshot>, after: Readonly<DirectorySnapshot>): boolean {
  if (before.metadata?.resourceVersion === after.metadata?.resourceVersion) return true;
  return watched(before) !== watched(after);
}

const defaultResyncIntervalMs = 5 * 60_000;
const defaultRetryBaseMs = 1000;
const retryMaxMs = 60_000;

/**
 * Watches `snapshots` and calls `reconcile` for each snapshot that appears or changes, until the term
 * of `context` ends; resolves once stopped. `reconcile` throws only when the term has lapsed.
 */
export async function watchSnapshots(
  snapshots: ResourceClient<DirectorySnapshot>,
  reconcile: (snapshot: Readonly<DirectorySnapshot>, context: OperationContext) => Promise<SnapshotSync>,
  context: OperationContext,
  timings: SnapshotWatchTimings = {},
): Promise<void> {
  const { signal, logger } = context;
  let crdMissing = false;
  const informer = new SharedInformer(snapshots, {
    resyncPeriod: timings.resyncIntervalMs ?? defaultResyncIntervalMs,
    logger,
    onWatchError: (err) => {
      // A cluster without the CRD (each provisioner ships it) has snapshots off: said once, listed after a back-off.
      if (!isNotFound(err)) logger.warn({ err }, 'watching DirectorySnapshots failed; listing them again');
      else if (!crdMissing)
        logger.info('no DirectorySnapshot resource (CRD not installed): snapshots are off');
      crdMissing = isNotFound(err);
    },
  });
  const retryBaseMs = timings.retryBaseMs ?? defaultRetryBaseMs;
  const queue = new RateLimitingQueue({
    name: 'directorysnapshots',
    rateLimiter: new ItemExponentialFailureRateLimiter(retryBaseMs, retryMaxMs),
  });
  const enqueue = (snapshot: DirectorySnapshot): void => queue.add(metaNamespaceKey(snapshot));
  // A snapshot gone for good has nothing left to do: its data went before its finalizer did.
  informer.addEventHandler({
    onAdd: enqueue,
    onUpdate: (before, snapshot) => {
      if (needsSync(before, snapshot)) enqueue(snapshot);
    },
  });
  const sync = async (key: string): Promise<void> => {
    const snapshot = informer.store.getByKey(key);
    if (snapshot === undefined) {
      queue.forget(key);
      return;
    }
    try {
      if ((await reconcile(snapshot, context)) === 'retry') queue.addRateLimited(key);
      else queue.forget(key);
    } catch (err) {
      if (!isLeadershipLapsedError(err)) throw err;
      // The fence also closes for a moment (an event loop stalled past the retry period) and opens
      // at the next renewal with the term going on: dropped here, a deleted snapshot kept its data
      // until the next resync. Tried again after its back-off; an ended term has shut the queue.
      if (!signal.aborted) queue.addRateLimited(key);
    }
  };
  const stop = (): void => queue.shutDown();
  signal.addEventListener('abort', stop, { once: true });
  try {
    await Promise.all([informer.run(signal), runWorkers(queue, 1, sync, { signal, logger })]);
  } finally {
    signal.removeEventListener('abort', stop);
    queue.shutDown();
  }
}
