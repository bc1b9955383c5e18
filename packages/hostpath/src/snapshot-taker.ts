/**
 * Takes and deletes `DirectorySnapshot`s on a hostpath root. The leader polls the snapshots while
 * its term lasts (started by `maintain`); a snapshot of a claim whose PV this provisioner made is
 * claimed (an annotation naming the provisioner, and a finalizer), copied with safe-fs's clone into
 * the root's snapshot area and marked ready. Deleting the object removes the copy first, unless
 * its policy is `Retain`. Every copy and removal is fenced by the term; a copy killed half-way is
 * started over by the next leader (the clone removes its leftover, found by the snapshot's record).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InfeasibleError, type OperationContext } from '@kube-provisioner/controller';
import { isNotFound, type ResourceClient } from '@kube-provisioner/controller/client';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { isLeadershipLapsedError } from '@kube-provisioner/controller/leader-election';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { type CreateVolumeOptions, snapshotPath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { type CloneScope, sourcePathOf } from './clone-request.ts';
import {
  annSnapshotProvisioner,
  type DirectorySnapshot,
  deletionPolicyOf,
  snapshotFinalizer,
  snapshotRecordName,
} from './directory-snapshot.ts';

/** What taking and restoring snapshots read and write on the API server. */
export interface SnapshotAccess {
  /** `directorysnapshots` `get` (restores), `list`, `patch`; `directorysnapshots/status` `patch`. */
  readonly snapshots: Pick<ResourceClient<DirectorySnapshot>, 'get' | 'list' | 'patch'>;
  /** `persistentvolumeclaims` `get`. */
  readonly claims: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get'>;
  /** `persistentvolumes` `get`. */
  readonly volumes: Pick<ResourceClient<V1PersistentVolume>, 'get'>;
}

/** Options of {@link SnapshotTaker}. */
export interface SnapshotTakerOptions extends SnapshotAccess {
  readonly root: VolumeRoot;
  /** This instance's root and provisioner name; snapshots are taken in shared mode only. */
  readonly scope: CloneScope;
  /** Pause between two passes over the snapshots. Default 2 s. */
  readonly pollIntervalMs?: number | undefined;
  /** Clock for `creationTime` and `error.time`. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

const defaultPollIntervalMs = 2000;
const crdMissingPollIntervalMs = 60_000;

/** The snapshots of one provisioner. */
export class SnapshotTaker {
  readonly #options: SnapshotTakerOptions;
  readonly #now: () => number;
  /** The signal of the term whose loop runs; a new term starts a new loop. */
  #running: AbortSignal | undefined;

  constructor(options: SnapshotTakerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Starts the polling loop for the term of `context`, unless it runs already; returns at once. */
  start(context: OperationContext): void {
    if (this.#running === context.signal) return;
    this.#running = context.signal;
    void this.#loop(context);
  }

  async #loop(context: OperationContext): Promise<void> {
    const interval = this.#options.pollIntervalMs ?? defaultPollIntervalMs;
    let crdMissing = false;
    while (!context.signal.aborted) {
      let pause = interval;
      try {
        await this.reconcileAll(context);
        crdMissing = false;
      } catch (err) {
        if (isLeadershipLapsedError(err) || context.signal.aborted) return;
        // A cluster without the CRD (deploy/snapshot-crd.yaml) has snapshots off: said once, checked rarely.
        if (isNotFound(err)) {
          if (!crdMissing)
            context.logger.info('no DirectorySnapshot resource (CRD not installed): snapshots are off');
          crdMissing = true;
          pause = crdMissingPollIntervalMs;
        } else {
          context.logger.warn({ err }, 'snapshot pass failed; trying again');
        }
      }
      await sleep(pause, undefined, { signal: context.signal }).catch(() => undefined);
    }
  }

  /** One pass over every snapshot of the cluster, one at a time. */
  async reconcileAll(context: OperationContext): Promise<void> {
    let next: string | undefined;
    do {
      const page = await this.#options.snapshots.list({
        signal: context.signal,
        ...(next !== undefined && { continue: next }),
      });
      for (const snapshot of page.items) await this.reconcile(snapshot, context);
      next = page.metadata?.continue || undefined;
    } while (next !== undefined);
  }

  /**
   * Brings one snapshot forward: claims it when its source is this provisioner's, copies it, or
   * removes its data once the object is being deleted.
   *
   * @throws only a lapsed term's error; any other failure is written to the snapshot's status.
   */
  async reconcile(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<void> {
    const ours = this.#options.scope.provisionerName;
    const owner = snapshot.metadata?.annotations?.[annSnapshotProvisioner];
    if (owner !== undefined && owner !== ours) return;
    // Whether this provisioner reports on the snapshot: its own, also from the moment this pass claims it.
    let mine = owner === ours;
    try {
      if (snapshot.metadata?.deletionTimestamp !== undefined) {
        if (owner === ours) await this.#remove(snapshot, context);
        return;
      }
      if (snapshot.status?.readyToUse === true) return;
      const source = await this.#source(snapshot, context.signal);
      if (source === undefined) return;
      const claimed = mine ? snapshot : await this.#claim(snapshot, context);
      mine = true;
      await this.#take(claimed, source, context);
    } catch (err) {
      if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
      // Only the provisioner whose source it is reports on a snapshot.
      if (mine || err instanceof InfeasibleError) await this.#fail(snapshot, err, context);
    }
  }

  /**
   * The source claim's PV when it is this provisioner's; `undefined` for another provisioner's.
   *
   * @throws while the claim is missing or not Bound (retried by the next pass).
   */
  async #source(
    snapshot: Readonly<DirectorySnapshot>,
    signal: AbortSignal,
  ): Promise<V1PersistentVolume | undefined> {
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
    return provisioner === this.#options.scope.provisionerName ? pv : undefined;
  }

  /** Marks the snapshot as this provisioner's, with the finalizer that keeps the object until its data is gone. */
  async #claim(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<DirectorySnapshot> {
    const { name = '', namespace = '', resourceVersion } = snapshot.metadata ?? {};
    const finalizers = [...(snapshot.metadata?.finalizers ?? []), snapshotFinalizer];
    const annotations = { [annSnapshotProvisioner]: this.#options.scope.provisionerName };
    context.assertLeader();
    // The resourceVersion makes two provisioners claiming at once a conflict for one of them.
    const patch = { metadata: { annotations, finalizers, resourceVersion } };
    return this.#options.snapshots.patch(name, patch, 'merge', { namespace, signal: context.signal });
  }

  async #take(
    snapshot: Readonly<DirectorySnapshot>,
    pv: Readonly<V1PersistentVolume>,
    context: OperationContext,
  ): Promise<void> {
    const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
    const sourcePath = sourcePathOf(pv, this.#options.scope);
    const path = snapshotPath(namespace, uid);
    context.assertLeader();
    const progress = await this.#options.root.cloneVolume(sourcePath, path, {
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
  }

  /** Removes the snapshot's data (unless `Retain`), then its finalizer. */
  async #remove(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<void> {
    const finalizers = snapshot.metadata?.finalizers ?? [];
    // A restore still copies from it: its cloning-protection finalizer goes when the copy ends.
    if (!finalizers.includes(snapshotFinalizer) || finalizers.includes(finalizerCloningProtection)) return;
    const { name = '', namespace = '', uid = '', resourceVersion } = snapshot.metadata ?? {};
    const path = snapshotPath(namespace, uid);
    if (deletionPolicyOf(snapshot) === 'Delete') {
      context.assertLeader();
      const fence = { pvName: snapshotRecordName(uid), beforeEachWrite: () => context.assertLeader() };
      if (snapshot.status?.readyToUse !== true) {
        // A copy killed half-way may have left its volume half-made (a record without its directory)
        // and its temporary copy: made whole and removed first, so that nothing stays behind.
        await this.#options.root.createVolume(path, {
          ...this.#volumeOf(snapshot),
          beforeEachWrite: fence.beforeEachWrite,
        });
        await this.#options.root.removeCloneLeftover(path, fence);
      }
      const outcome = await this.#options.root.deleteVolume(path, fence);
      context.logger.info({ namespace, name, path, outcome }, 'snapshot data removed');
    } else {
      context.logger.info({ namespace, name, path }, 'snapshot data retained');
    }
    context.assertLeader();
    const patch = {
      metadata: { finalizers: finalizers.filter((f) => f !== snapshotFinalizer), resourceVersion },
    };
    await this.#options.snapshots.patch(name, patch, 'merge', { namespace, signal: context.signal });
  }

  /** The snapshot's volume in the area: its record and directory settings. */
  #volumeOf(snapshot: Readonly<DirectorySnapshot>): CreateVolumeOptions {
    const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
    return {
      owner: {
        claimUid: uid,
        namespace,
        claimName: name,
        pvName: snapshotRecordName(uid),
        provisioner: this.#options.scope.provisionerName,
      },
      // The area is the provisioner's alone: no pod mounts it.
      mode: 0o700,
      parentMode: 0o700,
      ownParentsOnly: true,
    };
  }

  /** Writes the failure into the status, once per message (the next pass tries again). */
  async #fail(snapshot: Readonly<DirectorySnapshot>, err: unknown, context: OperationContext): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    if (snapshot.status?.error?.message === message) return;
    const error = { message, time: new Date(this.#now()).toISOString() };
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
