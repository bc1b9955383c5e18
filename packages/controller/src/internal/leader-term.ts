/**
 * One leadership term of the controller (in the Go library's start-up order): wait for the caches, run the
 * claim and volume workers until the term ends, and stop them the right way. A requested stop lets
 * in-flight operations finish, but only for `shutdownTimeoutMs`; a lost or lapsed Lease stops them at
 * once, in every state (a graceful stop included), since a successor may already lead.
 */
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { ProvisionControllerEvents } from '../lifecycle-events.ts';
import type { Clock } from '../util/clock.ts';
import { sleep } from '../util/clock.ts';
import type { LifecycleSink } from '../util/lifecycle-emitter.ts';
import type { Logger } from '../util/logger.ts';
import type { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { runWorkers } from '../workqueue/worker-pool.ts';
import type { ClaimSync } from './claim-sync.ts';
import type { ResolvedOptions } from './resolve-options.ts';
import type { VolumeSync } from './volume-sync.ts';
import type { WorkFence } from './work-fence.ts';
import { processWorkItem, type WorkItemConfig } from './work-item.ts';

/** How often cache sync is polled, as client-go's `WaitForCacheSync`. */
const cacheSyncPollMs = 100;

/**
 * How long a term still waits, after its operations were aborted, for those that ignore their
 * signal; then it abandons them so that `run()` settles (and a CLI can exit) whatever a provisioner does.
 */
export const abandonAfterMs = 5_000;

/** What a term works with; everything but the signals outlives it. */
export interface LeaderTermConfig {
  readonly identity: string;
  readonly options: ResolvedOptions;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly fence: WorkFence;
  /** Receives `synced`. */
  readonly events: LifecycleSink<ProvisionControllerEvents>;
  readonly claimQueue: RateLimitingQueue;
  readonly volumeQueue: RateLimitingQueue;
  readonly claimSync: ClaimSync;
  readonly volumeSync: VolumeSync;
  /** The caches that must have synced before work starts. */
  readonly informers: readonly { hasSynced(): boolean }[];
  /** The signal given to `run()`: only its abort is a requested (graceful) stop. */
  readonly requestedStop: AbortSignal;
  /** Aborted when `run()` ends for good: after the grace period of a graceful stop. */
  readonly hardStop: AbortController;
}

/**
 * Runs one term until `signal` aborts (a stop was requested, or leadership ended). `lost` aborts when
 * the Lease is lost or lapses: the term's operations are aborted at once.
 */
export async function runLeaderTerm(
  config: LeaderTermConfig,
  signal: AbortSignal,
  lost?: AbortSignal,
): Promise<void> {
  const { logger, identity, options, clock } = config;
  logger.info({ component: identity }, 'Starting provisioner controller');
  // `termStop` aborts the operations of this term; `hardStop` is the end of `run()`.
  const termStop = new AbortController();
  let cancelHardStop = (): void => {};
  const onStop = (): void => {
    if (!config.requestedStop.aborted) {
      termStop.abort(signal.reason);
      return;
    }
    cancelHardStop = clock.setTimer(() => {
      termStop.abort();
      config.hardStop.abort();
    }, options.shutdownTimeoutMs);
  };
  const onLost = (): void => termStop.abort(lost?.reason);
  signal.addEventListener('abort', onStop, { once: true });
  if (lost?.aborted) onLost();
  else lost?.addEventListener('abort', onLost, { once: true });
  try {
    const waitStart = clock.now();
    if (!(await waitForCacheSync(config, signal))) return;
    const waitedMs = clock.now() - waitStart;
    logger.info({ component: identity }, 'Started provisioner controller');
    config.events.emit('synced', () => ({ waitedMs }));
    const item = { clock, logger, signal: termStop.signal, fence: config.fence };
    const claimItem: WorkItemConfig = {
      ...item,
      kind: 'claim',
      queue: config.claimQueue,
      threshold: options.failedProvisionThreshold,
      timeoutMs: options.provisionTimeoutMs,
      sync: (key, context) => config.claimSync.syncKey(key, context),
      onFinished: (key) => config.claimSync.inProgress.delete(key),
    };
    const volumeItem: WorkItemConfig = {
      ...item,
      kind: 'volume',
      queue: config.volumeQueue,
      threshold: options.failedDeleteThreshold,
      timeoutMs: options.deletionTimeoutMs,
      sync: (key, context) => config.volumeSync.syncKey(key, context),
    };
    const workers = Promise.all([
      runMaintenance(config, signal, termStop.signal),
      runWorkers(config.claimQueue, options.threadiness, (key) => processWorkItem(claimItem, key), {
        signal,
        logger,
      }),
      runWorkers(config.volumeQueue, options.threadiness, (key) => processWorkItem(volumeItem, key), {
        signal,
        logger,
      }),
    ]);
    await settleWorkers(config, workers, termStop.signal);
  } finally {
    signal.removeEventListener('abort', onStop);
    lost?.removeEventListener('abort', onLost);
    cancelHardStop();
    // Work a term started in the background (a copy, a provisioner's polling loop started by
    // `maintain`) holds this signal: it ends with the term, also after a graceful stop.
    termStop.abort(new Error('the leadership term ended'));
    logger.info('Stopped provisioner controller');
  }
}

/**
 * Calls `Provisioner.maintain` now and then every `maintenanceIntervalMs` after the previous
 * call ended, until the term ends (`stop`); a call in flight then gets `operations`, the signal that
 * aborts the term's operations. Never rejects: a failure is logged and the schedule goes on.
 */
async function runMaintenance(
  config: LeaderTermConfig,
  stop: AbortSignal,
  operations: AbortSignal,
): Promise<void> {
  const { provisioner, maintenanceIntervalMs } = config.options;
  if (provisioner.maintain === undefined) return;
  const { logger, fence } = config;
  while (!stop.aborted) {
    const start = config.clock.now();
    try {
      await provisioner.maintain({ signal: operations, logger, assertLeader: fence.assertLeader });
      logger.debug({ durationMs: config.clock.now() - start }, 'Maintenance done');
    } catch (err) {
      if (isLeadershipLapsedError(err) || fence.abandoned() || operations.aborted) return;
      logger.error({ err }, 'Maintenance failed; trying again at the next interval');
    }
    try {
      await sleep(config.clock, maintenanceIntervalMs, stop);
    } catch {
      return;
    }
  }
}

/**
 * Waits for the workers; once `aborted` has fired, for at most {@link abandonAfterMs} more, so that an
 * operation that ignores its signal cannot hold `run()` (and the host) forever. An abandoned
 * operation gets no further fenced side effects.
 */
async function settleWorkers(
  config: LeaderTermConfig,
  workers: Promise<unknown>,
  aborted: AbortSignal,
): Promise<void> {
  const settled = workers.then(
    () => true,
    () => true,
  );
  const abandoned = new Promise<boolean>((resolve) => {
    const arm = (): void => {
      const cancel = config.clock.setTimer(() => resolve(false), abandonAfterMs);
      void settled.then(cancel);
    };
    if (aborted.aborted) arm();
    else aborted.addEventListener('abort', arm, { once: true });
    void settled.then(() => aborted.removeEventListener('abort', arm));
  });
  if (!(await Promise.race([settled, abandoned]))) {
    config.logger.error(
      { afterMs: abandonAfterMs },
      'Operations ignored their abort signal; abandoning them so the controller can stop',
    );
  }
}

/** Resolves true once all caches are synced, false if `signal` aborts first. */
async function waitForCacheSync(config: LeaderTermConfig, signal: AbortSignal): Promise<boolean> {
  while (!config.informers.every((informer) => informer.hasSynced())) {
    try {
      await sleep(config.clock, cacheSyncPollMs, signal);
    } catch {
      return false;
    }
  }
  return !signal.aborted;
}
