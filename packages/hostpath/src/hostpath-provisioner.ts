/**
 * The hostpath {@link Provisioner}: directories under a root on the node, returned as `hostPath` or
 * `local` PVs. No helper pods: the provisioner process does the filesystem work itself, through the
 * symlink-safe operations of `@kube-provisioner/safe-fs`.
 */
import {
  type ClaimDataSource,
  type ExpandOptions,
  type ExpandResult,
  InfeasibleError,
  type OperationContext,
  type Provisioner,
  type ProvisionOptions,
  type ProvisionResult,
  provisionFailure,
} from '@kube-provisioner/controller';
import {
  CloneJobs,
  type CloneJobsOptions,
  type CloneSourceAccess,
  type CloneStep,
} from '@kube-provisioner/controller/clone';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import type { DataSourceKind } from '@kube-provisioner/controller/provisioner';
import {
  type SnapshotAccess,
  SnapshotTaker,
  snapshotKind,
  snapshotPathOf,
  snapshotSourceAccess,
} from '@kube-provisioner/controller/snapshot';
import type { UsageMonitor, VolumeLister } from '@kube-provisioner/controller/usage';
import {
  explainPermissionError,
  type FsOps,
  isPersistentRefusal,
  joinBasePath,
  type RelativeVolumePath,
  relativePathUnder,
  snapshotPath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { type ClassParameters, parseClassParameters, resolveVolumeType } from './class-parameters.ts';
import {
  type CloneScope,
  type CloneVolumeSettings,
  cloneRequest,
  type EnforcedCloneSettings,
} from './clone-request.ts';
import { cloneVolumesOf, stepEnforcedClone } from './enforced-clone.ts';
import { NodePlacement, type NodeReader } from './node-placement.ts';
import { type HostPathVolume, listOwnedVolumes } from './owned-volumes.ts';
import {
  buildPersistentVolume,
  defaultNodeAffinityKey,
  recordedDeletePolicy,
  volumeNode,
  volumePath,
} from './persistent-volume.ts';
import type { ProvisionerMode } from './provisioner-mode.ts';
import { noRoomReason, type RootCapacityReader } from './root-capacity.ts';
import { type ProjectQuotaAccess, projectLimits, SizeEnforcement } from './size-enforcement.ts';
import { hostPathSnapshotStorage } from './snapshot-storage.ts';
import { quantityBytes } from './storage-quantity.ts';
import { requestedTakeBack, takeBackInto } from './take-back.ts';
import { directoryOptions, requestLimits, volumeDirectory, volumeOwner } from './volume-request.ts';

/** Default provisioner name, as written in `StorageClass.provisioner`. */
export const defaultProvisionerName = 'kube-provisioner.io/hostpath';

/** Options of {@link HostPathProvisioner}. */
export interface HostPathProvisionerOptions {
  readonly mode: ProvisionerMode;
  /** Recorded in each directory's ownership record. Default {@link defaultProvisionerName}. */
  readonly provisionerName?: string | undefined;
  /** Absolute directory holding the volumes; the same path on the node and in the provisioner's pod. */
  readonly root: string;
  /** This node. Required in per-node mode; in shared mode it is only recorded on the PVs. */
  readonly nodeName?: string | undefined;
  /** Node label used for PV node affinity in per-node mode. Default `kubernetes.io/hostname`. */
  readonly nodeAffinityKey?: string | undefined;
  /**
   * Node access. In per-node mode it resolves the affinity label value (which may differ from the
   * node name) and lets any instance release the PVs of a node that no longer exists. Without it the
   * affinity value is the node name and PVs of vanished nodes stay `Released`.
   */
  readonly nodes?: NodeReader | undefined;
  /** System calls used on the root; tests inject failures here. Default: the real ones. */
  readonly fs?: FsOps | undefined;
  /**
   * Usage reporting: each `maintain` call measures the volumes this instance owns (read with
   * `volumes`) through `monitor`. Absent: no usage is measured.
   */
  readonly usage?:
    | { readonly monitor: UsageMonitor<HostPathVolume>; readonly volumes: VolumeLister }
    | undefined;
  /** Project quotas, for classes with `enforceSize`. Default: `xfs_quota` and `/proc/self/mountinfo`. */
  readonly projectQuotas?: ProjectQuotaAccess | undefined;
  /**
   * Reads clone sources and sets their cloning-protection finalizer. With it the provisioner clones
   * claims whose `dataSource` is a PersistentVolumeClaim on its root; without it such claims are refused.
   * With `registry`, the clone metrics (`kube_provisioner_clone*`) are registered there.
   */
  readonly clones?: (CloneSourceAccess & Pick<CloneJobsOptions, 'registry'>) | undefined;
  /** Where claim events of its own are recorded (`VolumeTakenBack`); a controller `EventRecorder` fits. */
  readonly events?: Pick<EventRecorder, 'event'> | undefined;
  /**
   * `DirectorySnapshot` access, shared mode only: with it the leader takes and deletes snapshots
   * (the controller's `SnapshotTaker`) and restores claims whose `dataSourceRef` names one
   * (`snapshotSourceAccess`).
   */
  readonly snapshots?: SnapshotAccess | undefined;
  /**
   * Per-node mode: the root's capacity. With it a new empty volume the root has no room for (free
   * space, or unreserved space for `enforceSize`) is rescheduled (state `Reschedule`) before anything is made.
   */
  readonly capacity?: Pick<RootCapacityReader, 'read' | 'space'> | undefined;
  /** Called after each volume made or deleted, e.g. to publish the new capacity. */
  readonly onVolumesChanged?: (() => void) | undefined;
}

/**
 * Provisions directories under a root. In per-node mode it only takes claims scheduled to its own
 * node and only deletes volumes recorded on its node; everything else is left to its peers, silently.
 */
export class HostPathProvisioner implements Provisioner {
  readonly #mode: ProvisionerMode;
  readonly #provisionerName: string;
  readonly #root: VolumeRoot;
  readonly #nodeName: string | undefined;
  readonly #placement: NodePlacement;
  readonly #usage: HostPathProvisionerOptions['usage'];
  readonly #events: HostPathProvisionerOptions['events'];
  readonly #capacity: HostPathProvisionerOptions['capacity'];
  readonly #onVolumesChanged: () => void;
  readonly #sizes: SizeEnforcement;
  readonly #clones: CloneJobs<RelativeVolumePath, CloneVolumeSettings> | undefined;
  readonly #restores: CloneJobs<RelativeVolumePath, CloneVolumeSettings> | undefined;
  readonly #snapshots: SnapshotTaker<RelativeVolumePath> | undefined;
  /** Where this instance's volumes are: its root and, in per-node mode, its node. */
  readonly #scope: CloneScope;
  /** PersistentVolumeClaim (a clone) and DirectorySnapshot (a restore) when their options are given. */
  readonly dataSources: readonly DataSourceKind[];

  /** @throws Error when the root is not absolute, per-node mode has no node name or has snapshots. */
  constructor(options: HostPathProvisionerOptions) {
    if (options.mode === 'per-node' && !options.nodeName) {
      throw new Error('per-node mode needs the node name (NODE_NAME)');
    }
    if (options.mode === 'per-node' && options.snapshots !== undefined) {
      throw new Error('snapshots are taken in shared mode only');
    }
    this.#mode = options.mode;
    this.#provisionerName = options.provisionerName ?? defaultProvisionerName;
    this.#root = new VolumeRoot(options.root, { fs: options.fs });
    if (this.#root.base === '/') throw new Error('the root directory must not be /');
    this.#nodeName = options.nodeName || undefined;
    const affinityKey = options.nodeAffinityKey ?? defaultNodeAffinityKey;
    this.#placement = new NodePlacement(this.#mode, this.#nodeName, affinityKey, options.nodes);
    this.#usage = options.usage;
    this.#events = options.events;
    this.#capacity = options.capacity;
    this.#onVolumesChanged = options.onVolumesChanged ?? (() => {});
    // Per node, this instance alone writes records on its root: its free-ID search reads them once.
    this.#sizes = new SizeEnforcement(this.#root, options.projectQuotas, this.#mode === 'per-node');
    const { clones } = options;
    // Its deletes of failed copies remove their projects' limits too.
    const volumes = cloneVolumesOf(this.#root, this.#sizes);
    this.#clones =
      clones && new CloneJobs(volumes, clones, this.#provisionerName, { registry: clones.registry });
    const { snapshots } = options;
    // A restore's own claim is a claim, not a snapshot: its copy checks it there.
    this.#restores =
      snapshots &&
      new CloneJobs(volumes, snapshotSourceAccess(snapshots.snapshots), this.#provisionerName, {
        targetClaims: snapshots.claims,
      });
    this.dataSources = [
      ...(clones === undefined ? [] : [{ apiGroup: '', kind: 'PersistentVolumeClaim' }]),
      ...(snapshots === undefined ? [] : [snapshotKind]),
    ];
    const node = this.#mode === 'per-node' ? this.#nodeName : undefined;
    this.#scope = { root: this.#root.base, node, provisionerName: this.#provisionerName };
    this.#snapshots =
      snapshots &&
      new SnapshotTaker({
        ...snapshots,
        storage: hostPathSnapshotStorage(this.#root, this.#scope),
        provisionerName: this.#provisionerName,
      });
  }

  shouldProvision(pvc: Readonly<V1PersistentVolumeClaim>): boolean {
    return this.#placement.takesClaim(pvc);
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    try {
      const { pvc, storageClass, pvName } = options;
      const parameters = parseClassParameters(storageClass.parameters);
      if (parameters.roots !== undefined) {
        throw new InfeasibleError(
          'parameter "roots" needs named roots: start the per-node provisioner with --root name=/path,name=/path',
        );
      }
      const volumeType = resolveVolumeType(parameters, pvc.metadata?.annotations);
      this.#placement.checkClaim(pvc, options.selectedNodeName);
      if (volumeType === 'local' && this.#mode === 'shared') {
        throw new InfeasibleError('volume type "local" needs node affinity, which shared mode does not set');
      }
      const relative = volumeDirectory(parameters, pvc, pvName);
      const noRoom = await this.#noRoom(relative, options, parameters, context);
      if (noRoom !== undefined) return { error: new Error(noRoom), state: 'Reschedule' };
      const nodeAffinity = await this.#placement.nodeAffinity(context.signal);
      context.signal.throwIfAborted();
      const path = await this.#fill(relative, options, parameters, context);
      if (typeof path !== 'string') return { error: new Error(path.message), state: 'Background' };
      this.#onVolumesChanged();
      return {
        pv: buildPersistentVolume({
          pvName,
          pvc,
          storageClass,
          path,
          volumeType,
          onDelete: parameters.onDelete,
          nodeName: this.#nodeName,
          nodeAffinity,
        }),
      };
    } catch (err) {
      // Bad paths and permission refusals slow the retries down; ownership and symlink refusals
      // stay plain errors with an event. A permission refusal's event says how to fix it.
      return provisionFailure(explainPermissionError(err, this.#root.base), isPersistentRefusal);
    }
  }

  shouldDelete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<boolean> {
    return this.#placement.deletesVolume(pv, context.signal);
  }

  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    if ((await this.#placement.volumeToDelete(pv, context.signal)) === 'gone') {
      // Its disk is gone with the node; releasing the API object is all that is left to do.
      context.logger.info({ node: volumeNode(pv) }, 'node no longer exists; skipping directory cleanup');
      return;
    }
    const path = volumePath(pv);
    if (path === undefined) throw new Error('the volume has neither a hostPath nor a local source');
    // The stored path is untrusted input: it must resolve strictly inside the root.
    const relative = relativePathUnder(this.#root.base, path);
    context.signal.throwIfAborted();
    const pvName = pv.metadata?.name ?? '';
    // A retained tree keeps its project ID in its record, but is no volume to limit any more.
    const projectId = await this.#sizes.removeLimit(relative, pvName, context);
    if (projectId !== undefined) context.logger.info({ path: relative, projectId }, 'volume limit removed');
    if (recordedDeletePolicy(pv) === 'delete') {
      await this.#removeDirectory(relative, pv, context);
      this.#onVolumesChanged();
      return;
    }
    context.assertLeader();
    const outcome = await this.#root.releaseVolume(relative, {
      pvName,
      beforeEachWrite: () => context.assertLeader(),
    });
    context.assertLeader();
    const fields = { path: relative, outcome, node: this.#nodeName };
    // Retaining never touches the data: a directory that is not this PV's only loses its take-back.
    if (outcome === 'released') context.logger.info(fields, 'volume directory retained');
    else context.logger.warn(fields, 'volume directory not marked retained: no claim can take it back');
  }

  /** In per-node mode only the volume's own node expands it; the others leave the claim alone. */
  shouldExpand(pv: Readonly<V1PersistentVolume>): boolean {
    return this.#placement.expandsVolume(pv);
  }

  /**
   * Grows a volume. Without enforced sizes a directory has no size to change: the new capacity is
   * recorded only, on the PV and the claim by the controller. With them, the project's
   * limits are raised first.
   */
  async expand(options: ExpandOptions, context: OperationContext): Promise<ExpandResult> {
    const path = volumePath(options.pv);
    if (path === undefined) throw new Error('the volume has neither a hostPath nor a local source');
    const relative = relativePathUnder(this.#root.base, path);
    try {
      const bytes = quantityBytes(options.capacity);
      if (bytes === undefined) throw new InfeasibleError(`size ${options.capacity} is not a number of bytes`);
      const limits = projectLimits(bytes, parseClassParameters(options.storageClass.parameters));
      // A volume without a project has no size to raise: recorded only.
      await this.#sizes.raiseLimit(relative, options.pv.metadata?.name ?? '', limits, context);
    } catch (err) {
      if (err instanceof InfeasibleError) return { error: err, state: 'Finished' };
      throw err;
    }
    return { capacity: options.capacity };
  }

  /** Starts taking snapshots for this term; measures the usage of the volumes this instance owns, when usage reporting is on. */
  async maintain(context: OperationContext): Promise<void> {
    this.#snapshots?.start(context);
    if (this.#usage === undefined) return;
    const scope = {
      mode: this.#mode,
      provisionerName: this.#provisionerName,
      root: this.#root.base,
      nodeName: this.#nodeName,
    };
    const volumes = await listOwnedVolumes(this.#usage.volumes, scope, context);
    await this.#usage.monitor.refresh(volumes, context.signal, context.logger);
  }

  /**
   * Why this node cannot hold the new volume, when capacity is known: only for an empty directory
   * not made yet, since a clone or take-back already under way, or a directory an earlier attempt of
   * this claim made, must be finished where it started (a reschedule would leave it behind).
   */
  async #noRoom(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<string | undefined> {
    if (this.#capacity === undefined || this.#mode === 'shared') return undefined;
    if (options.dataSource !== undefined || requestedTakeBack(options.pvc, options.pvName) !== undefined) {
      return undefined;
    }
    if ((await this.#root.readRecord(relative))?.pvName === options.pvName) return undefined;
    const requested = quantityBytes(options.pvc.spec?.resources?.requests?.storage) ?? 0;
    // Free space is one statfs; unreserved space also reads the volumes placed.
    const capacity = parameters.enforceSize
      ? await this.#capacity.read(context)
      : await this.#capacity.space();
    return noRoomReason(capacity, this.#nodeName ?? '', requested, parameters.enforceSize);
  }

  /** Makes the volume: a clone (its progress while it runs), the data taken back, or an empty directory. */
  async #fill(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<string | { readonly message: string }> {
    const { dataSource, pvc, pvName } = options;
    const restores = this.#restores;
    if (dataSource?.kind === snapshotKind.kind && dataSource.apiGroup === snapshotKind.apiGroup && restores) {
      const restore = { ...options, dataSource };
      const pathOf = (pv: Readonly<V1PersistentVolume>) => snapshotPathOf(pv, snapshotPath);
      const step = await this.#clone(restores, restore, relative, parameters, context, pathOf);
      return step.ended ? joinBasePath(this.#root.base, relative) : step;
    }
    if (dataSource !== undefined && this.#clones !== undefined) {
      const step = await this.#clone(this.#clones, { ...options, dataSource }, relative, parameters, context);
      return step.ended ? joinBasePath(this.#root.base, relative) : step;
    }
    const fromPvName = requestedTakeBack(pvc, pvName);
    return fromPvName === undefined
      ? this.#createDirectory(relative, options, parameters, context)
      : this.#takeBack(relative, options, parameters, fromPvName, context);
  }

  async #createDirectory(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<string> {
    const path = joinBasePath(this.#root.base, relative);
    if (!parameters.enforceSize) {
      await this.#makeVolume(relative, options, parameters, undefined, context);
      return path;
    }
    const limits = requestLimits(options, parameters);
    // Before anything is made: a root that cannot enforce sizes gets no volume.
    const quotas = await this.#sizes.quotas();
    await this.#sizes.withNewProjectId(quotas, context.signal, (id) =>
      this.#makeVolume(relative, options, parameters, id, context),
    );
    await this.#sizes.enforce(relative, path, quotas, limits, context);
    return path;
  }

  /**
   * One step of a clone (of a snapshot with `pathOf`); with `enforceSize`, copied into the project of
   * its volume (`enforced-clone.ts`).
   */
  #clone(
    clones: CloneJobs<RelativeVolumePath, CloneVolumeSettings>,
    options: ProvisionOptions & { readonly dataSource: ClaimDataSource },
    relative: RelativeVolumePath,
    parameters: ClassParameters,
    context: OperationContext,
    pathOf?: (pv: Readonly<V1PersistentVolume>) => RelativeVolumePath,
  ): Promise<CloneStep> {
    const step = (enforced?: EnforcedCloneSettings) => {
      const request = cloneRequest(options, relative, parameters, this.#scope, enforced);
      return clones.step(pathOf ? { ...request, pathOf } : request, context);
    };
    if (!parameters.enforceSize) return step();
    const limits = requestLimits(options, parameters);
    const claimUid = options.pvc.metadata?.uid ?? '';
    const makeVolume = (id: number) => this.#makeVolume(relative, options, parameters, id, context);
    const target = { root: this.#root, sizes: this.#sizes, relative, pvName: options.pvName, claimUid };
    return stepEnforcedClone({ ...target, limits, makeVolume }, context, step);
  }

  /** Gives the claim the retained data of PV `fromPvName`, found on this instance's root only. */
  async #takeBack(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    fromPvName: string,
    context: OperationContext,
  ): Promise<string> {
    const request = {
      ...directoryOptions(parameters),
      owner: volumeOwner(options, this.#provisionerName, undefined),
      fromPvName,
      fromNamespaces: parameters.takeBackFromNamespaces,
    };
    const limits = parameters.enforceSize ? requestLimits(options, parameters) : undefined;
    const { node } = this.#scope;
    const into = { pvc: options.pvc, relative, request, limits, node };
    await takeBackInto(this.#root, this.#sizes, into, context, this.#events);
    return joinBasePath(this.#root.base, relative);
  }

  async #makeVolume(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    projectId: number | undefined,
    context: OperationContext,
  ): Promise<void> {
    context.assertLeader();
    const outcome = await this.#root.createVolume(relative, {
      ...directoryOptions(parameters),
      owner: volumeOwner(options, this.#provisionerName, projectId),
      beforeEachWrite: () => context.assertLeader(),
    });
    // A freeze during the call (a paused process, a lost Lease) ends the step here: the directory is
    // the claim's either way, and the new leader's retry reuses it; nothing more happens in this term.
    context.assertLeader();
    context.logger.info({ path: relative, outcome }, 'volume directory ready');
  }

  async #removeDirectory(
    relative: RelativeVolumePath,
    pv: Readonly<V1PersistentVolume>,
    context: OperationContext,
  ): Promise<void> {
    // The ownership record must name this PV, so a forged path cannot reach another volume.
    context.assertLeader();
    const outcome = await this.#root.deleteVolume(relative, {
      pvName: pv.metadata?.name ?? '',
      beforeEachWrite: () => context.assertLeader(),
    });
    context.assertLeader();
    context.logger.info({ path: relative, outcome }, 'volume directory removed');
  }
}
