/**
 * The blocking PV store (Go's `backoffStore` and default; `pvSave: { strategy: 'blocking' }`): retry
 * the create a few times while holding the claim worker; if every attempt fails, delete the asset so
 * the next `provision` starts clean.
 * A save interrupted by the controller's hard stop is not cleaned up.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { isAlreadyExists } from '../client/api-error.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import { isLeadershipLapsedError, type LeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { Provisioner } from '../provisioner.ts';
import type { SaveBackoff } from '../pv-save-options.ts';
import { Backoff } from '../util/backoff.ts';
import { type Clock, sleep } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import { claimKey } from './claim-fields.ts';
import { withDeadline } from './deadline.ts';
import { frozenClone } from './deep-freeze.ts';
import type { PvStore } from './pv-store.ts';
import type { RecordEvent } from './record-event.ts';
import { toError } from './to-error.ts';
import type { WorkFence } from './work-fence.ts';

/** A PV of the same name exists and belongs to another claim: never retried by the store, never cleaned up. */
export class PvConflictError extends Error {
  override readonly name = 'PvConflictError';
}

/** What both stores need to write PVs. */
export interface SaveConfig {
  readonly pvs: ResourceClient<V1PersistentVolume>;
  readonly recordEvent: RecordEvent;
  readonly clock: Clock;
  readonly apiRequestTimeoutMs: number;
  /** Check the claimRef of an existing PV on `AlreadyExists`; Go accepts it blindly. */
  readonly verifyExistingPV: boolean;
  /** Aborted when the controller stops for good; ends retries and cleanup. */
  readonly signal: AbortSignal;
  /** Checked immediately before each create and cleanup. */
  readonly fence: WorkFence;
}

/**
 * Creates `pv`; `AlreadyExists` is success unless `verifyExistingPV` finds the existing PV bound to
 * another claim UID, which rejects with a {@link PvConflictError}. Rejects with a
 * {@link LeadershipLapsedError} when the term ended before the answer, whatever it was, was handled.
 */
export async function createPersistentVolume(
  config: SaveConfig,
  pv: V1PersistentVolume,
  logger: Logger,
): Promise<void> {
  const name = pv.metadata?.name ?? '';
  const call = <T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    withDeadline(config.clock, config.apiRequestTimeoutMs, config.signal, fn);
  let exists = false;
  try {
    config.fence.assertLeader();
    await call((signal) => config.pvs.create(pv, { signal, beforeSend: config.fence.assertLeader }));
  } catch (err) {
    if (!isAlreadyExists(err)) {
      // A failure answered after the term ended is no failure of this replica's either.
      config.fence.assertLeader();
      throw err;
    }
    exists = true;
  }
  const expected = pv.spec?.claimRef?.uid;
  const owner =
    exists && config.verifyExistingPV
      ? (await call((signal) => config.pvs.get(name, { signal }))).spec?.claimRef?.uid
      : expected;
  // An answer that comes back after the term ended (a paused process) is dropped, with no cleanup: the
  // PV may exist, and the successor provisions the claim again and finds it.
  config.fence.assertLeader();
  if (owner !== expected) {
    throw new PvConflictError(
      `PersistentVolume "${name}" already exists and belongs to claim UID "${owner ?? ''}", not "${expected ?? ''}"`,
    );
  }
  if (exists) logger.info({ PV: name }, 'Persistentvolume already exists, reusing');
  else logger.debug({ PV: name }, 'Persistentvolume saved');
}

export class BlockingPvStore implements PvStore {
  readonly #config: SaveConfig;
  readonly #backoff: SaveBackoff;
  readonly #provisioner: Provisioner;

  constructor(config: SaveConfig, backoff: SaveBackoff, provisioner: Provisioner) {
    this.#config = config;
    this.#backoff = backoff;
    this.#provisioner = provisioner;
  }

  async savePersistentVolume(
    claim: Readonly<V1PersistentVolumeClaim>,
    pv: V1PersistentVolume,
    logger: Logger,
  ): Promise<void> {
    const { recordEvent } = this.#config;
    const name = pv.metadata?.name ?? '';
    let saveError: Error | undefined;
    const saved = await this.#retry(async () => {
      try {
        await createPersistentVolume(this.#config, pv, logger);
        return true;
      } catch (err) {
        if (err instanceof PvConflictError || isLeadershipLapsedError(err)) throw err;
        saveError = toError(err);
        logger.info({ PV: name, err: saveError }, 'Failed to save persistentvolume');
        return false;
      }
    }).catch((err: unknown) => {
      if (!(err instanceof PvConflictError)) throw err;
      // The name is taken by another claim's PV: deleting "our" asset could delete theirs.
      recordEvent(claim, 'Warning', 'ProvisioningFailed', err.message);
      throw err;
    });
    if (saved) {
      recordEvent(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
      return;
    }

    const error = saveError ?? new Error(`saving PersistentVolume "${name}" was interrupted`);
    if (this.#config.signal.aborted || this.#config.fence.abandoned()) {
      // A create cut short may have reached the server, so the asset may be in use under a PV. It is
      // kept: `provision` is idempotent and runs again after the restart or on the new leader.
      logger.info({ PV: name, err: error }, 'Saving the PV was interrupted by shutdown; volume kept');
      throw error;
    }
    logger.error({ err: error }, 'Error creating provisioned PV object for claim. Deleting the volume.');
    recordEvent(
      claim,
      'Warning',
      'ProvisioningFailed',
      `Error creating provisioned PV object for claim ${claimKey(claim)}: ${error.message}. Deleting the volume.`,
    );
    let deleteError: Error | undefined;
    const frozen = frozenClone(pv);
    const cleaned = await this.#retry(async () => {
      try {
        this.#config.fence.assertLeader();
        await this.#provisioner.delete(frozen, {
          signal: this.#config.signal,
          assertLeader: this.#config.fence.assertLeader,
          logger,
        });
        logger.debug({ PV: name }, 'Cleaning volume succeeded');
        return true;
      } catch (err) {
        if (isLeadershipLapsedError(err)) throw err;
        deleteError = toError(err);
        logger.info({ PV: name, err: deleteError }, 'Failed to clean volume');
        return false;
      }
    });
    if (!cleaned && (this.#config.signal.aborted || this.#config.fence.abandoned())) {
      // Nothing to delete by hand: the claim is provisioned again after the restart.
      logger.info({ PV: name, err: deleteError }, 'Cleaning the volume was interrupted by shutdown');
    } else if (!cleaned) {
      logger.error(
        { err: deleteError },
        'Error cleaning provisioned volume for claim. Please delete manually.',
      );
      recordEvent(
        claim,
        'Warning',
        'ProvisioningCleanupFailed',
        `Error cleaning provisioned volume for claim ${claimKey(claim)}: ${deleteError?.message ?? ''}. Please delete manually.`,
      );
    }
    throw error;
  }

  /**
   * Go's `wait.ExponentialBackoff`: up to `steps` attempts with a backoff pause between them. Resolves
   * false when attempts run out or the controller stops.
   */
  async #retry(attempt: () => Promise<boolean>): Promise<boolean> {
    const { signal, clock } = this.#config;
    const { steps, ...backoffOptions } = this.#backoff;
    const backoff = new Backoff({ ...backoffOptions, clock });
    for (let step = 1; ; step++) {
      if (await attempt()) return true;
      if (step >= steps || signal.aborted) return false;
      try {
        await sleep(clock, backoff.next(), signal);
      } catch {
        return false;
      }
    }
  }
}
