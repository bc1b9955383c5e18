/**
 * The volume path: for each PV this controller owns, keep its finalizer right and, once
 * it is released with reclaim policy `Delete`, delete the backing asset and then the PV object.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { isNotFound } from '../client/api-error.ts';
import type { DeleteOptions, ResourceClient } from '../client/resource-client.ts';
import { isIgnoredError, isVolumeInUseError } from '../errors.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { ProvisionControllerEvents } from '../lifecycle-events.ts';
import type { OperationContext, Provisioner } from '../provisioner.ts';
import type { Clock } from '../util/clock.ts';
import type { LifecycleSink } from '../util/lifecycle-emitter.ts';
import { finalizerPV } from '../wire-names.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import { withDeadline } from './deadline.ts';
import { frozenClone } from './deep-freeze.ts';
import type { RecordEvent } from './record-event.ts';
import { toError } from './to-error.ts';
import {
  desiredFinalizers,
  isProvisionerForVolume,
  isVolumeDeletable,
  removeFinalizer,
} from './volume-policy.ts';
import type { WorkFence } from './work-fence.ts';

/** What the volume path needs from the controller. */
export interface VolumeSyncConfig {
  readonly provisioner: Provisioner;
  readonly knownNames: ReadonlySet<string>;
  readonly addFinalizer: boolean;
  /** Send the PV UID as a delete precondition (not in the Go library). */
  readonly pvDeletePrecondition: boolean;
  readonly volumes: ResourceClient<V1PersistentVolume>;
  /** The cached PV by name. */
  readonly getVolume: (name: string) => V1PersistentVolume | undefined;
  readonly recordEvent: RecordEvent;
  readonly metrics: ControllerMetrics;
  /** Receives `deleted` and `deleteFailed`. */
  readonly events: LifecycleSink<ProvisionControllerEvents>;
  readonly clock: Clock;
  readonly apiRequestTimeoutMs: number;
  /** Checked immediately before each side effect. */
  readonly fence: WorkFence;
}

export class VolumeSync {
  readonly #config: VolumeSyncConfig;
  /**
   * Deletions whose asset `delete` has succeeded, by PV UID, until the PV leaves the cache. Deleting
   * the PV object sets a deletionTimestamp while our finalizer is still on it; the informer delivers
   * that state after the sync, and Go then runs the whole delete path again, `delete` included.
   * Here a finished deletion is not repeated, and a retried one repeats only its API steps.
   */
  readonly #deletions = new Map<string, 'asset-deleted' | 'done'>();

  constructor(config: VolumeSyncConfig) {
    this.#config = config;
  }

  /** The PV with this UID is gone from the cache: nothing more will be done for it. */
  forget(uid: string): void {
    this.#deletions.delete(uid);
  }

  /** Work item of queue `volumes`: syncs the cached PV named `name`, if any. */
  async syncKey(name: string, context: OperationContext): Promise<void> {
    const volume = this.#config.getVolume(name);
    if (volume !== undefined) await this.sync(volume, context);
  }

  /** Syncs one PV. Rejects when it must be requeued. */
  async sync(volume: V1PersistentVolume, context: OperationContext): Promise<void> {
    const { knownNames, metrics, clock, events } = this.#config;
    if (!isProvisionerForVolume(volume, knownNames)) return;
    if (this.#deletions.get(volume.metadata?.uid ?? '') === 'done') return;
    const current = await this.#handleProtectionFinalizer(volume, context);
    if (!(await this.#shouldDelete(current, context))) return;

    const labels = { class: current.spec?.storageClassName ?? '' };
    const start = clock.now();
    let deleted: boolean;
    try {
      deleted = await this.#deleteVolumeOperation(current, context);
    } catch (err) {
      // A postponed deletion (the volume is still in use) is neither a failure nor a deletion (Go v13.1.0).
      if (!this.#abandoned(err) && !isVolumeInUseError(err)) {
        metrics.deleteFailedTotal.inc(labels);
        events.emit('deleteFailed', () => ({ pv: current, volume: current, error: toError(err) }));
      }
      throw err;
    }
    const durationMs = clock.now() - start;
    metrics.deleteDurationSeconds.observe(labels, durationMs / 1000);
    metrics.deleteTotal.inc(labels);
    if (deleted) events.emit('deleted', () => ({ pv: current, volume: current, durationMs }));
  }

  async #handleProtectionFinalizer(
    volume: V1PersistentVolume,
    context: OperationContext,
  ): Promise<V1PersistentVolume> {
    const finalizers = desiredFinalizers(volume, this.#config.addFinalizer);
    if (finalizers === undefined) return volume;
    try {
      return await this.#patchFinalizers(volume, finalizers.includes(finalizerPV), context.signal);
    } catch (err) {
      if (this.#abandoned(err)) throw err;
      throw new Error(
        `failed to modify finalizers to ${JSON.stringify(finalizers)} on volume ${volume.metadata?.name}: ${toError(err).message}`,
        { cause: err },
      );
    }
  }

  async #shouldDelete(volume: V1PersistentVolume, context: OperationContext): Promise<boolean> {
    const { provisioner } = this.#config;
    if (provisioner.shouldDelete && !(await provisioner.shouldDelete(frozenClone(volume), context)))
      return false;
    return isVolumeDeletable(volume, this.#config.addFinalizer);
  }

  /**
   * Deletes the asset, then the PV object; resolves false when `delete` ignored the volume
   * (`IgnoredError`). Rejects with a `VolumeInUseError` from `delete` as it is, to be retried.
   */
  async #deleteVolumeOperation(volume: V1PersistentVolume, context: OperationContext): Promise<boolean> {
    const name = volume.metadata?.name ?? '';
    const uid = volume.metadata?.uid;
    const logger = context.logger.child({ PV: name });
    if (uid !== undefined && this.#deletions.has(uid)) {
      logger.debug('Volume asset already deleted; finishing the PersistentVolume deletion');
    } else {
      try {
        this.#config.fence.assertLeader();
        await this.#config.provisioner.delete(frozenClone(volume), { ...context, logger });
        // A provisioner that returns after its term ended (a paused process): the successor redoes it.
        this.#config.fence.assertLeader();
      } catch (err) {
        if (this.#abandoned(err)) throw err;
        if (isIgnoredError(err)) {
          logger.debug({ reason: err.reason }, 'Volume deletion ignored');
          return false;
        }
        if (isVolumeInUseError(err)) {
          // Expected while the volume detaches: retried with the usual backoff, reported as Normal.
          logger.debug({ reason: err.reason }, 'Volume deletion postponed');
          this.#config.recordEvent(volume, 'Normal', 'VolumeDelete', err.message);
          throw err;
        }
        const error = toError(err);
        logger.error({ err: error }, 'Volume deletion failed');
        this.#config.recordEvent(volume, 'Warning', 'VolumeFailedDelete', error.message);
        throw error;
      }
      if (uid !== undefined) this.#deletions.set(uid, 'asset-deleted');
      logger.debug('Volume deleted');
    }

    const options: DeleteOptions = {};
    if (this.#config.pvDeletePrecondition && uid !== undefined) options.preconditions = { uid };
    try {
      this.#config.fence.assertLeader();
      await this.#call(context.signal, (signal) =>
        this.#config.volumes.delete(name, {
          ...options,
          signal,
          beforeSend: this.#config.fence.assertLeader,
        }),
      );
    } catch (err) {
      if (this.#abandoned(err)) throw err;
      logger.info({ err }, 'Failed to delete persistentvolume');
      throw err;
    }

    if (this.#config.addFinalizer && (volume.metadata?.finalizers?.length ?? 0) > 0) {
      // The delete set a deletionTimestamp: work on the object as cached now, not the one we started with.
      const latest = this.#config.getVolume(name);
      if (latest !== undefined && removeFinalizer(latest.metadata?.finalizers, finalizerPV).modified) {
        try {
          await this.#patchFinalizers(latest, false, context.signal);
        } catch (err) {
          if (this.#abandoned(err)) throw err;
          if (!isNotFound(err)) {
            logger.info({ err }, 'Failed to remove finalizer for persistentvolume');
            throw err;
          }
        }
      }
    }
    // An answer that comes back after the term ended (a paused process) is dropped: the successor
    // sees from its own cache whether the PV is gone.
    this.#config.fence.assertLeader();
    if (uid !== undefined) this.#deletions.set(uid, 'done');
    logger.debug('PersistentVolume deleted succeeded');
    return true;
  }

  /**
   * Adds or removes our finalizer with a strategic-merge patch that touches only that list entry, so
   * concurrent writers of other finalizers are never overwritten.
   */
  #patchFinalizers(
    volume: V1PersistentVolume,
    add: boolean,
    parent: AbortSignal,
  ): Promise<V1PersistentVolume> {
    const patch = add
      ? { metadata: { finalizers: [finalizerPV] } }
      : { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerPV] } };
    const name = volume.metadata?.name ?? '';
    this.#config.fence.assertLeader();
    return this.#call(parent, (signal) =>
      this.#config.volumes.patch(name, patch, 'strategic', {
        signal,
        beforeSend: this.#config.fence.assertLeader,
      }),
    );
  }

  /** Whether a step failed because the controller stops or no longer leads: not a delete failure. */
  #abandoned(err: unknown): boolean {
    return isLeadershipLapsedError(err) || this.#config.fence.abandoned();
  }

  #call<T>(parent: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(this.#config.clock, this.#config.apiRequestTimeoutMs, parent, fn);
  }
}
