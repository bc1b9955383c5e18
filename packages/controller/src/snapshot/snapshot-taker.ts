/**
 * Takes and deletes `DirectorySnapshot`s on a provisioner's root (`SnapshotStorage`). While its
 * term lasts (started by `maintain`) the leader watches the snapshots (`snapshot-watch.ts`); a
 * snapshot of a claim whose PV this provisioner made is claimed (an annotation naming the
 * provisioner, and a finalizer), copied with the root's clone into its snapshot area and marked
 * ready. Deleting the object removes the copy first, unless its policy is `Retain`. Every copy and
 * removal is fenced by the term; a copy killed half-way is started over by the next leader (the
 * clone removes its leftover, found by the snapshot's record).
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { isNotFound } from '../client/api-error.ts';
import type { CloneProgress } from '../clone/clone-progress.ts';
import { finalizerCloningProtection } from '../clone/clone-source.ts';
import { InfeasibleError } from '../errors.ts';
import type { EventType } from '../events/event-recorder.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { OperationContext } from '../provisioner.ts';
import { realClock, sleep } from '../util/clock.ts';
import { annDynamicallyProvisioned } from '../wire-names.ts';
import {
  annSnapshotProvisioner,
  type DirectorySnapshot,
  deletionPolicyOf,
  snapshotFinalizer,
  snapshotGroup,
  snapshotRecordName,
} from './directory-snapshot.ts';
import type { SnapshotAccess } from './snapshot-access.ts';
import { SnapshotMetrics } from './snapshot-metrics.ts';
import type { SnapshotStorage, SnapshotVolumeSettings } from './snapshot-storage.ts';
import { annSnapshotSourceClaimUid, SnapshotSweep } from './snapshot-sweep.ts';
import { type SnapshotSync, type SnapshotWatchTimings, watchSnapshots } from './snapshot-watch.ts';

/** `Normal` event on a `DirectorySnapshot` once it is ready to use (the CSI snapshot controller's reason). */
export const reasonSnapshotReady = 'SnapshotReady';

/** `Warning` event on a `DirectorySnapshot` whose copy failed, once per message (the CSI snapshot controller's reason). */
export const reasonSnapshotFailed = 'SnapshotCreationFailed';

/** Options of {@link SnapshotTaker}. */
export interface SnapshotTakerOptions<Path> extends SnapshotAccess, SnapshotWatchTimings {
  /** Where the snapshots and their sources are. */
  readonly storage: SnapshotStorage<Path>;
  /** Snapshots of claims whose PV this provisioner made are its own. */
  readonly provisionerName: string;
  /** Clock for `creationTime`, `error.time` and the age bound. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** How often every claim's snapshots are swept by their class's bounds (and when a term starts), in ms. Default 5 minutes. */
  readonly sweepIntervalMs?: number | undefined;
}

const defaultSweepIntervalMs = 5 * 60_000;

/** The snapshots of one provisioner. */
export class SnapshotTaker<Path> {
  readonly #options: SnapshotTakerOptions<Path>;
  readonly #now: () => number;
  readonly #metrics: SnapshotMetrics | undefined;
  readonly #sweep: SnapshotSweep;
  /** The signal of the term whose loop runs; a new term starts a new loop. */
  #running: AbortSignal | undefined;

  constructor(options: SnapshotTakerOptions<Path>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#metrics = options.registry && new SnapshotMetrics(options.registry);
    this.#sweep = new SnapshotSweep({ ...options, metrics: this.#metrics, now: this.#now });
  }

  /** Starts watching the snapshots for the term of `context`, unless it does already; returns at once. */
  start(context: OperationContext): void {
    if (this.#running === context.signal) return;
    this.#running = context.signal;
    const reconcile = (snapshot: Readonly<DirectorySnapshot>, term: OperationContext) =>
      this.reconcile(snapshot, term);
    watchSnapshots(this.#options.snapshots, reconcile, context, this.#options).catch((err: unknown) => {
      context.logger.error({ err }, 'watching DirectorySnapshots stopped; the next term starts again');
    });
    void this.#sweepEvery(this.#options.sweepIntervalMs ?? defaultSweepIntervalMs, context);
  }

  /**
   * Deletes the snapshots their source claim's class bounds expire, for every claim: what the leader
   * runs when its term starts and every `sweepIntervalMs` (the age bound needs a clock) besides each claim's sweep when one of
   * its snapshots becomes ready. Fenced by the term.
   *
   * @throws a lapsed term's error, or a failed list.
   */
  sweep(context: OperationContext): Promise<void> {
    return this.#sweep.sweepAll(context);
  }

  async #sweepEvery(intervalMs: number, context: OperationContext): Promise<void> {
    while (!context.signal.aborted) {
      try {
        await this.sweep(context);
      } catch (err) {
        if (context.signal.aborted) return;
        // No CRD: the watch says once that snapshots are off.
        if (!isNotFound(err)) {
          context.logger.warn(
            { err },
            'sweeping DirectorySnapshots by their class bounds failed; trying again later',
          );
        }
      }
      // At the start of each term, then every interval: a leader changing often still sweeps.
      await sleep(realClock, intervalMs, context.signal).catch(() => undefined);
    }
  }

  /**
   * Brings one snapshot forward: claims it when its source is this provisioner's, copies it, or
   * removes its data once the object is being deleted. `retry` when it could not: its source claim
   * is missing or not Bound yet, or a step failed (then written to its status, once per message).
   * Before acting it reads the snapshot again: the watch's copy may predate this provisioner's own
   * last write (a snapshot just marked ready would be copied twice).
   *
   * @throws only a lapsed term's error.
   */
  async reconcile(cached: Readonly<DirectorySnapshot>, context: OperationContext): Promise<SnapshotSync> {
    if (this.#settled(cached)) return 'settled';
    let snapshot: Readonly<DirectorySnapshot>;
    try {
      const { name = '', namespace = '' } = cached.metadata ?? {};
      snapshot = await this.#options.snapshots.get(name, { namespace, signal: context.signal });
    } catch (err) {
      if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
      return isNotFound(err) ? 'settled' : 'retry';
    }
    if (this.#settled(snapshot)) return 'settled';
    const ours = this.#options.provisionerName;
    const owner = snapshot.metadata?.annotations?.[annSnapshotProvisioner];
    // Whether this provisioner reports on the snapshot: its own, also from the moment this pass claims it.
    let mine = owner === ours;
    try {
      if (snapshot.metadata?.deletionTimestamp !== undefined) {
        if (owner === ours) await this.#remove(snapshot, context);
        return 'settled';
      }
      const source = await this.#source(snapshot, context.signal);
      if (source === undefined) return 'settled';
      const claimed = mine ? snapshot : await this.#claim(snapshot, source.claimUid, context);
      mine = true;
      await this.#take(claimed, source.pv, context);
      await this.#sweepSourceOf(claimed, context);
      return 'settled';
    } catch (err) {
      if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
      // Only the provisioner whose source it is reports on a snapshot.
      if (mine || err instanceof InfeasibleError) await this.#fail(snapshot, err, context);
      // An infeasible snapshot waits for its object to change.
      return err instanceof InfeasibleError ? 'settled' : 'retry';
    }
  }

  /** Whether nothing is left to do for `snapshot`: another provisioner's, or ready and not being deleted. */
  #settled(snapshot: Readonly<DirectorySnapshot>): boolean {
    const owner = snapshot.metadata?.annotations?.[annSnapshotProvisioner];
    if (owner !== undefined && owner !== this.#options.provisionerName) return true;
    return snapshot.status?.readyToUse === true && snapshot.metadata?.deletionTimestamp === undefined;
  }

  /** Sweeps the taken snapshot's claim by its class's bounds; a failure waits for the next sweep. */
  async #sweepSourceOf(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<void> {
    await this.#sweep.sweepSourceOf(snapshot, context).catch((err: unknown) => {
      if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
      context.logger.warn({ err }, 'sweeping a claim’s DirectorySnapshots by their class bounds failed');
    });
  }

  /**
   * The source claim's PV and UID when it is this provisioner's; `undefined` for another provisioner's.
   *
   * @throws while the claim is missing or not Bound (retried after a back-off).
   */
  async #source(
    snapshot: Readonly<DirectorySnapshot>,
    signal: AbortSignal,
  ): Promise<{ readonly pv: V1PersistentVolume; readonly claimUid: string } | undefined> {
    const namespace = snapshot.metadata?.namespace ?? '';
    const name = snapshot.spec?.source?.persistentVolumeClaimName ?? '';
    if (name === '') throw new InfeasibleError('spec.source.persistentVolumeClaimName is empty');
    const claim = await this.#options.claims.get(name, { namespace, signal }).catch((err: unknown) => {
      throw isNotFound(err) ? new Error(`source claim ${namespace}/${name} does not exist`) : err;
    });
    const volumeName = claim.spec?.volumeName ?? '';
    if (claim.status?.phase !== 'Bound' || volumeName === '') {
      throw new Error(`source claim ${namespace}/${name} is not Bound yet`);
    }
    const pv = await this.#options.volumes.get(volumeName, { signal });
    const provisioner = pv.metadata?.annotations?.[annDynamicallyProvisioned];
    const claimUid = claim.metadata?.uid ?? '';
    return provisioner === this.#options.provisionerName ? { pv, claimUid } : undefined;
  }

  /**
   * Marks the snapshot as this provisioner's, with the finalizer that keeps the object until its
   * data is gone and the UID of its source claim (the claim its class's bounds count it for).
   */
  async #claim(
    snapshot: Readonly<DirectorySnapshot>,
    claimUid: string,
    context: OperationContext,
  ): Promise<DirectorySnapshot> {
    const { name = '', namespace = '', resourceVersion } = snapshot.metadata ?? {};
    const finalizers = [...(snapshot.metadata?.finalizers ?? []), snapshotFinalizer];
    const annotations = {
      [annSnapshotProvisioner]: this.#options.provisionerName,
      [annSnapshotSourceClaimUid]: claimUid,
    };
    context.assertLeader();
    // The resourceVersion makes two provisioners claiming at once a conflict for one of them.
    const patch = { metadata: { annotations, finalizers, resourceVersion } };
    return this.#options.snapshots.patch(name, patch, 'merge', { namespace, signal: context.signal });
  }

  /** Copies the source into the snapshot's directory and marks it ready, counting it either way. */
  async #take(
    snapshot: Readonly<DirectorySnapshot>,
    pv: Readonly<V1PersistentVolume>,
    context: OperationContext,
  ): Promise<void> {
    const startedAt = this.#now();
    try {
      const progress = await this.#copy(snapshot, pv, context);
      this.#metrics?.taken(progress.bytes, (this.#now() - startedAt) / 1000);
      const claim = `${snapshot.metadata?.namespace}/${snapshot.spec?.source?.persistentVolumeClaimName}`;
      const message = `snapshot of claim ${claim} taken: ${progress.entries} entries, ${progress.bytes} bytes`;
      this.#event(snapshot, 'Normal', reasonSnapshotReady, message);
    } catch (err) {
      if (!isLeadershipLapsedError(err) && !context.signal.aborted) this.#metrics?.failed();
      throw err;
    }
  }

  async #copy(
    snapshot: Readonly<DirectorySnapshot>,
    pv: Readonly<V1PersistentVolume>,
    context: OperationContext,
  ): Promise<CloneProgress> {
    const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
    const { storage } = this.#options;
    const sourcePath = storage.sourcePathOf(pv);
    const path = await storage.snapshotPathOf(namespace, uid, sourcePath);
    context.assertLeader();
    const progress = await storage.volumes.cloneVolume(sourcePath, path, {
      ...this.#volumeOf(snapshot),
      sourcePvName: pv.metadata?.name ?? '',
      specialFiles: 'skip',
      signal: context.signal,
      beforeEachWrite: () => context.assertLeader(),
    });
    context.assertLeader();
    const status = {
      readyToUse: true,
      restoreSize: pv.spec?.capacity?.storage,
      creationTime: new Date(this.#now()).toISOString(),
      error: null,
    };
    await this.#patchStatus(snapshot, status, context);
    context.logger.info({ namespace, name, path, progress }, 'snapshot taken');
    return progress;
  }

  /** Records an event on the snapshot (its kind set: a cached object may come without it). */
  #event(snapshot: Readonly<DirectorySnapshot>, type: EventType, reason: string, message: string): void {
    const object = { ...snapshot, apiVersion: `${snapshotGroup}/v1alpha1`, kind: 'DirectorySnapshot' };
    this.#options.events?.event(object, type, reason, message);
  }

  /** Removes the snapshot's data (unless `Retain`), then its finalizer. */
  async #remove(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<void> {
    const finalizers = snapshot.metadata?.finalizers ?? [];
    // A restore still copies from it: its cloning-protection finalizer goes when the copy ends.
    if (!finalizers.includes(snapshotFinalizer) || finalizers.includes(finalizerCloningProtection)) return;
    const { name = '', namespace = '', uid = '', resourceVersion } = snapshot.metadata ?? {};
    const { volumes } = this.#options.storage;
    const path = await this.#options.storage.snapshotPathOf(namespace, uid);
    if (deletionPolicyOf(snapshot) === 'Delete') {
      context.assertLeader();
      const fence = { pvName: snapshotRecordName(uid), beforeEachWrite: () => context.assertLeader() };
      if (snapshot.status?.readyToUse !== true) {
        // A copy killed half-way may have left its volume half-made (a record without its directory)
        // and its temporary copy: made whole and removed first, so that nothing stays behind.
        await volumes.createVolume(path, {
          ...this.#volumeOf(snapshot),
          beforeEachWrite: fence.beforeEachWrite,
        });
        await volumes.removeCloneLeftover(path, fence);
      }
      const outcome = await volumes.deleteVolume(path, fence);
      context.logger.info({ namespace, name, path, outcome }, 'snapshot data removed');
    } else {
      // Released in its record: the audit lists it as kept, not as an orphan.
      context.assertLeader();
      const beforeEachWrite = () => context.assertLeader();
      const outcome = await volumes.releaseVolume(path, {
        pvName: snapshotRecordName(uid),
        beforeEachWrite,
      });
      context.logger.info({ namespace, name, path, outcome }, 'snapshot data retained');
    }
    context.assertLeader();
    const patch = {
      metadata: { finalizers: finalizers.filter((f) => f !== snapshotFinalizer), resourceVersion },
    };
    await this.#options.snapshots.patch(name, patch, 'merge', { namespace, signal: context.signal });
  }

  /** The snapshot's volume in the area: its record and directory settings. */
  #volumeOf(snapshot: Readonly<DirectorySnapshot>): SnapshotVolumeSettings {
    const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
    return {
      owner: {
        claimUid: uid,
        namespace,
        claimName: name,
        pvName: snapshotRecordName(uid),
        provisioner: this.#options.provisionerName,
      },
      // The area is the provisioner's alone: no pod mounts it.
      mode: 0o700,
      parentMode: 0o700,
      ownParentsOnly: true,
    };
  }

  /** Writes the failure into the status, once per message. */
  async #fail(snapshot: Readonly<DirectorySnapshot>, err: unknown, context: OperationContext): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    if (snapshot.status?.error?.message === message) return;
    const error = { message, time: new Date(this.#now()).toISOString() };
    this.#event(snapshot, 'Warning', reasonSnapshotFailed, message);
    await this.#patchStatus(snapshot, { readyToUse: false, error }, context).catch((patchErr: unknown) => {
      context.logger.warn({ err: patchErr }, 'could not write a snapshot’s error');
    });
  }

  async #patchStatus(
    snapshot: Readonly<DirectorySnapshot>,
    status: Record<string, unknown>,
    context: OperationContext,
  ): Promise<void> {
    const { name = '', namespace = '' } = snapshot.metadata ?? {};
    await this.#options.snapshots.patch(name, { status }, 'merge', {
      namespace,
      signal: context.signal,
      subresource: 'status',
    });
  }
}
