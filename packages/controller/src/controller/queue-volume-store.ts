/**
 * The queue PV store (Go's `queueStore`, chosen by `createProvisionedPVLimiter`): one inline create;
 * on failure the PV is kept in memory and retried in the background forever, and the claim counts as
 * provisioned at once. The asset is never deleted. Unsaved PVs are lost on exit.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from '../util/logger.ts';
import type { RateLimiter } from '../workqueue/rate-limiters.ts';
import { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { runWorkers } from '../workqueue/worker-pool.ts';
import { createVolume, type SaveConfig } from './blocking-volume-store.ts';
import { toError } from './to-error.ts';
import type { VolumeStore } from './volume-store.ts';

/** What the queue store needs beyond {@link SaveConfig}. */
export interface QueueStoreConfig extends SaveConfig {
  readonly limiter: RateLimiter;
  readonly workers: number;
  /** The cached claims with a UID, to address the success event. */
  readonly claimsByUid: (uid: string) => readonly V1PersistentVolumeClaim[];
  readonly logger: Logger;
  readonly registry?: Registry;
}

export class QueueVolumeStore implements VolumeStore {
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

  /** Names of the PVs not saved yet. */
  pending(): string[] {
    return [...this.#unsaved.keys()];
  }

  /** How many times the save of `name` failed since it last succeeded. */
  numRequeues(name: string): number {
    return this.#queue.numRequeues(name);
  }

  async storeVolume(
    _claim: Readonly<V1PersistentVolumeClaim>,
    volume: V1PersistentVolume,
    logger: Logger,
  ): Promise<void> {
    const name = volume.metadata?.name ?? '';
    try {
      await this.#save(volume, logger);
    } catch (err) {
      logger.info({ PV: name, err }, 'Failed to save persistentvolume, retrying in the background');
      this.#unsaved.set(name, volume);
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
    const volume = this.#unsaved.get(name);
    if (volume === undefined) {
      this.#queue.forget(name);
      return;
    }
    try {
      await this.#save(volume, this.#config.logger);
    } catch (err) {
      this.#config.logger.info({ PV: name, err: toError(err) }, 'Error saving volume, enqueued again');
      this.#queue.addRateLimited(name);
      return;
    }
    this.#unsaved.delete(name);
    this.#queue.forget(name);
  }

  async #save(volume: V1PersistentVolume, logger: Logger): Promise<void> {
    await createVolume(this.#config, volume, logger);
    const claims = this.#config.claimsByUid(volume.spec?.claimRef?.uid ?? '');
    const [claim] = claims;
    if (claims.length === 1 && claim !== undefined) {
      this.#config.recordEvent(
        claim,
        'Normal',
        'ProvisioningSucceeded',
        `Successfully provisioned volume ${volume.metadata?.name ?? ''}`,
      );
    }
  }
}
