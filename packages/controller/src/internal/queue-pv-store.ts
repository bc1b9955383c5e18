/**
 * The queue PV store (Go's `queueStore`, the default `pvSave` strategy): one inline create;
 * on failure the PV is kept in memory and retried in the background forever, and the claim counts as
 * provisioned at once; a retry writes only while this replica leads. The asset is never deleted.
 * Unsaved PVs are lost on exit. A PV name taken by another claim (`verifyExistingPV`) is never
 * queued: it fails the claim like the blocking store.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { Logger } from '../util/logger.ts';
import type { RateLimiter } from '../workqueue/rate-limiters.ts';
import { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { runWorkers } from '../workqueue/worker-pool.ts';
import { createPersistentVolume, PvConflictError, type SaveConfig } from './blocking-pv-store.ts';
import type { PvStore } from './pv-store.ts';
import { toError } from './to-error.ts';

/** What the queue store needs beyond {@link SaveConfig}. */
export interface QueueStoreConfig extends SaveConfig {
  readonly limiter: RateLimiter;
  readonly workers: number;
  /** The cached claims with a UID, to address the success event. */
  readonly claimsByUid: (uid: string) => readonly V1PersistentVolumeClaim[];
  readonly logger: Logger;
  readonly registry?: Registry;
}

export class QueuePvStore implements PvStore {
  readonly #config: QueueStoreConfig;
  readonly #queue: RateLimitingQueue;
  /** PVs waiting to be saved, by name. */
  readonly #unsaved = new Map<string, V1PersistentVolume>();

  constructor(config: QueueStoreConfig) {
    this.#config = config;
    this.#queue = new RateLimitingQueue({
      name: 'unsavedpvs',
      clock: config.clock,
      rateLimiter: config.limiter,
      ...(config.registry ? { registry: config.registry } : {}),
    });
  }

  /**
   * Resolves whether or not the create succeeded, except on a {@link PvConflictError}: another
   * claim's PV holds the name, which no retry can change, so the claim fails (and is retried
   * rate-limited) instead.
   */
  async savePersistentVolume(
    claim: Readonly<V1PersistentVolumeClaim>,
    pv: V1PersistentVolume,
    logger: Logger,
  ): Promise<void> {
    const name = pv.metadata?.name ?? '';
    try {
      await this.#save(pv, logger);
    } catch (err) {
      if (isLeadershipLapsedError(err)) throw err;
      if (err instanceof PvConflictError) {
        this.#config.recordEvent(claim, 'Warning', 'ProvisioningFailed', err.message);
        throw err;
      }
      logger.info({ PV: name, err }, 'Failed to save persistentvolume, retrying in the background');
      this.#unsaved.set(name, pv);
      this.#queue.addRateLimited(name);
    }
  }

  /**
   * Runs the save workers until `signal` aborts (each finishes its current save), then shuts the
   * queue down. Runs on every replica, leader or not, like Go's.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { logger, workers } = this.#config;
    logger.info('Starting save volume queue');
    signal.addEventListener('abort', () => this.#queue.shutDown(), { once: true });
    await runWorkers(this.#queue, workers, (name) => this.#processItem(name), { signal, logger });
    this.#queue.shutDown();
    logger.info('Stopped save volume queue');
  }

  async #processItem(name: string): Promise<void> {
    const pv = this.#unsaved.get(name);
    if (pv === undefined) {
      this.#queue.forget(name);
      return;
    }
    const { logger, recordEvent } = this.#config;
    try {
      await this.#save(pv, logger);
    } catch (err) {
      if (!(err instanceof PvConflictError)) {
        if (isLeadershipLapsedError(err)) {
          // Kept for when this replica leads again: its claim already counts as provisioned here, so
          // nothing else would save it before the informer's resync. A successor that provisions the
          // claim meanwhile makes the same PV, which the retry then finds and reuses.
          logger.debug({ PV: name }, 'Not leading: volume enqueued again');
        } else {
          logger.info({ PV: name, err: toError(err) }, 'Error saving volume, enqueued again');
        }
        this.#queue.addRateLimited(name);
        return;
      }
      // The claim already counts as provisioned; retrying cannot free the name, so report and give up.
      logger.error({ PV: name, err }, 'Persistentvolume name is taken by another claim, not saving it');
      const claim = this.#claimOf(pv);
      if (claim !== undefined) recordEvent(claim, 'Warning', 'ProvisioningFailed', err.message);
    }
    this.#unsaved.delete(name);
    this.#queue.forget(name);
  }

  async #save(pv: V1PersistentVolume, logger: Logger): Promise<void> {
    await createPersistentVolume(this.#config, pv, logger);
    const claim = this.#claimOf(pv);
    if (claim !== undefined) {
      this.#config.recordEvent(
        claim,
        'Normal',
        'ProvisioningSucceeded',
        `Successfully provisioned volume ${pv.metadata?.name ?? ''}`,
      );
    }
  }

  /** The cached claim `pv` is for, if exactly one claim has its claimRef UID (as Go). */
  #claimOf(pv: V1PersistentVolume): V1PersistentVolumeClaim | undefined {
    const claims = this.#config.claimsByUid(pv.spec?.claimRef?.uid ?? '');
    return claims.length === 1 ? claims[0] : undefined;
  }
}
