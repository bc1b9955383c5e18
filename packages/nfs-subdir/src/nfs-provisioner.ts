/**
 * The NFS {@link Provisioner} of both dialects: one directory per claim under the mounted export,
 * returned as an `nfs` PV. All filesystem work goes through `@kube-provisioner/safe-fs`, so no path
 * derived from a claim or a PV can leave the export or follow a link planted in it.
 */
import { lstat } from 'node:fs/promises';
import {
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
  type CloneCopyOptions,
  CloneJobs,
  type CloneJobsOptions,
  type CloneSourceAccess,
} from '@kube-provisioner/controller/clone';
import { GidAllocator } from '@kube-provisioner/controller/gid-allocator';
import type { DataSourceKind } from '@kube-provisioner/controller/provisioner';
import {
  type SnapshotAccess,
  SnapshotTaker,
  snapshotKind,
  snapshotPathOf,
  snapshotSourceAccess,
} from '@kube-provisioner/controller/snapshot';
import {
  type CloneVolumeOptions,
  type CreateVolumeOptions,
  type CreateVolumeOutcome,
  explainPermissionError,
  type FsOps,
  isPersistentRefusal,
  isSafeFsError,
  joinBasePath,
  type RelativeVolumePath,
  snapshotPath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ArchiveSweepSink } from './archive-metrics.ts';
import { ArchiveSizes } from './archive-sizes.ts';
import { sweepExpiredArchives } from './archive-sweep.ts';
import { type ClassParameters, type NfsDialect, parseClassParameters } from './class-parameters.ts';
import { exportSnapshotStorage } from './export-snapshots.ts';
import { explainNfsError } from './nfs-error-advice.ts';
import { NfsExport } from './nfs-export.ts';
import { buildPersistentVolume } from './persistent-volume.ts';
import { isStaleRecord, type OwnerLookup, releasedStaleDataMessage } from './stale-record.ts';
import { takeBack, takeBackSource } from './take-back-request.ts';
import type { StorageClassReader } from './volume-delete-policy.ts';
import { reasonAdopted, type VolumeEventSink } from './volume-events.ts';
import { allocateVolumeGid, volumeModeWithGid } from './volume-gid.ts';
import { rendersUnderNamespace, volumePathFor } from './volume-path.ts';
import { removeVolume, type VolumeRemoval } from './volume-removal.ts';
import { measureOwnedVolumes, type NfsUsageReporting } from './volume-usage.ts';

/** Where the export is mounted in the provisioner's container, as upstream. */
export const defaultMountRoot = '/persistentvolumes';

/** Options of {@link NfsProvisioner}. */
export interface NfsProvisionerOptions {
  readonly dialect: NfsDialect;
  /** `NFS_SERVER`, written into every PV. */
  readonly server: string;
  /** `NFS_PATH`, the exported path on the server; normalised (`/`, trailing and doubled slashes). */
  readonly exportPath: string;
  /** Where that export is mounted here. Default {@link defaultMountRoot}. */
  readonly mountRoot?: string | undefined;
  /** `PROVISIONER_NAME`, recorded in each directory's ownership record. */
  readonly provisionerName: string;
  /** Used only to delete PVs made by the upstream programs, which record no delete policy. */
  readonly classes: StorageClassReader;
  /** System calls on the mount root; tests inject failures here. Default: the real ones. */
  readonly fs?: FsOps | undefined;
  /**
   * Delete nested volumes of the upstream programs (no ownership record) when their class says
   * delete. Default false: they are archived, as v4.0.2 never deleted them (`--delete-unrecorded-nested`).
   */
  readonly deleteUnrecordedNested?: boolean | undefined;
  /**
   * How long archives of PVs that record no retention (made without `archiveRetention`, or by the
   * upstream programs) are kept, in ms; default forever.
   */
  readonly archiveRetentionMs?: number | undefined;
  /** Where notes about volumes and claims are recorded as Events (a controller `EventRecorder` fits). */
  readonly events?: VolumeEventSink | undefined;
  /**
   * Reads clone sources and sets their cloning-protection finalizer. With it the provisioner clones
   * claims whose `dataSource` is a PersistentVolumeClaim; without it such claims are refused.
   * With `registry`, the clone metrics (`kube_provisioner_clone*`) are registered there.
   */
  readonly clones?: (CloneSourceAccess & Pick<CloneJobsOptions, 'registry'>) | undefined;
  /**
   * `DirectorySnapshot` access: with it the leader takes and deletes snapshots of this export's
   * claims into the export's snapshot area (the controller's `SnapshotTaker`, started by
   * `maintain`) and restores claims whose `dataSourceRef` names one, as clones are made. With
   * `take: false` it only restores: its caller takes the snapshots (several exports).
   */
  readonly snapshots?: (SnapshotAccess & { readonly take?: boolean | undefined }) | undefined;
  /**
   * Counts what archive retention keeps and removes; none without it. With {@link usage} too, the
   * sweeps size the archives (each once, within the usage monitor's I/O budget) for the byte metrics.
   */
  readonly archiveMetrics?: ArchiveSweepSink | undefined;
  /**
   * Usage reporting: each `maintain` call measures the volumes of this provisioner (read with
   * `volumes`) through `monitor`. Absent: no usage is measured.
   */
  readonly usage?: NfsUsageReporting | undefined;
  /**
   * Reads claims and PVs, to tell a stale ownership record (its claim and PV are gone) from a live
   * one. Without it every recorded directory of another claim is refused.
   */
  readonly owners?: OwnerLookup | undefined;
  /**
   * Hands out the supplemental GIDs of classes with `gidMin`/`gidMax`. Default: one reading the PVs
   * through {@link owners}; without either, claims of such classes fail.
   */
  readonly gids?: GidAllocator | undefined;
}

/** What a clone's or a restore's new volume needs besides the copy's own options. */
type CloneSettings = Omit<CloneVolumeOptions, keyof CloneCopyOptions>;

// Upstream's modes: every claim's workload, whatever its UID, can write its directory; the parents a
// pattern needs get 0755 (upstream's MkdirAll 0777 under the usual 022 umask).
const directoryMode = 0o777;
const parentMode = 0o755;

/** Provisions and deletes directories of one NFS export. */
export class NfsProvisioner implements Provisioner {
  readonly #dialect: NfsDialect;
  readonly #export: NfsExport;
  readonly #provisionerName: string;
  readonly #root: VolumeRoot;
  readonly #removal: VolumeRemoval;
  readonly #events: VolumeEventSink | undefined;
  readonly #owners: OwnerLookup | undefined;
  readonly #gids: GidAllocator | undefined;
  readonly #clones: CloneJobs<RelativeVolumePath, CloneSettings> | undefined;
  readonly #restores: CloneJobs<RelativeVolumePath, CloneSettings> | undefined;
  readonly #snapshots: SnapshotTaker<RelativeVolumePath> | undefined;
  readonly #archiveMetrics: ArchiveSweepSink | undefined;
  /** With usage reporting and archive metrics: the archives are sized within the usage budget. */
  readonly #archiveSizes: ArchiveSizes | undefined;
  readonly #usage: NfsProvisionerOptions['usage'];
  /**
   * PersistentVolumeClaim (a clone) when {@link NfsProvisionerOptions.clones} is given, and
   * DirectorySnapshot (a restore) when {@link NfsProvisionerOptions.snapshots} is.
   */
  readonly dataSources: readonly DataSourceKind[];

  /** @throws Error when the server or provisioner name is empty, or a path is not absolute. */
  constructor(options: NfsProvisionerOptions) {
    this.#export = new NfsExport(options.server, options.exportPath);
    if (options.provisionerName === '') throw new Error('the provisioner name must not be empty');
    this.#dialect = options.dialect;
    this.#provisionerName = options.provisionerName;
    this.#root = new VolumeRoot(options.mountRoot ?? defaultMountRoot, { fs: options.fs });
    this.#events = options.events;
    this.#removal = {
      nfsExport: this.#export,
      root: this.#root,
      dialect: options.dialect,
      classes: options.classes,
      deleteUnrecordedNested: options.deleteUnrecordedNested ?? false,
      archiveRetentionMs: options.archiveRetentionMs,
      events: options.events,
      explainRefusal: (err) => this.#explainRefusal(err),
    };
    this.#owners = options.owners;
    this.#gids =
      options.gids ??
      (options.owners === undefined ? undefined : new GidAllocator({ volumes: options.owners.volumes }));
    this.#archiveMetrics = options.archiveMetrics;
    this.#usage = options.usage;
    this.#archiveSizes =
      options.usage === undefined || options.archiveMetrics === undefined
        ? undefined
        : new ArchiveSizes(this.#root.base, options.usage.monitor, options.fs);
    const { clones } = options;
    this.#clones =
      clones === undefined
        ? undefined
        : new CloneJobs(this.#root, clones, this.#provisionerName, { registry: clones.registry });
    const { snapshots } = options;
    // A restore's own claim is a claim, not a snapshot: its copy checks it there.
    this.#restores =
      snapshots &&
      new CloneJobs(this.#root, snapshotSourceAccess(snapshots.snapshots), this.#provisionerName, {
        targetClaims: snapshots.claims,
      });
    this.#snapshots =
      snapshots === undefined || snapshots.take === false
        ? undefined
        : new SnapshotTaker({
            ...snapshots,
            storage: exportSnapshotStorage(this.#root, this.#export),
            provisionerName: this.#provisionerName,
          });
    this.dataSources = [
      ...(clones === undefined ? [] : [{ apiGroup: '', kind: 'PersistentVolumeClaim' }]),
      ...(snapshots === undefined ? [] : [snapshotKind]),
    ];
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    try {
      const { pvc, storageClass, pvName } = options;
      const parameters = parseClassParameters(this.#dialect, storageClass.parameters);
      if (pvc.spec?.selector !== undefined && pvc.spec.selector !== null) {
        throw new InfeasibleError('claim Selector is not supported');
      }
      const relative = volumePathFor(parameters, pvc, pvName);
      const owner = {
        claimUid: pvc.metadata?.uid ?? '',
        namespace: pvc.metadata?.namespace ?? '',
        claimName: pvc.metadata?.name ?? '',
        pvName,
        provisioner: this.#provisionerName,
      };
      const { dataSource } = options;
      const restore = dataSource?.kind === snapshotKind.kind && dataSource.apiGroup === snapshotKind.apiGroup;
      const jobs = restore ? this.#restores : this.#clones;
      if (dataSource !== undefined && jobs !== undefined) {
        const volume = { owner, mode: directoryMode, parentMode, specialFiles: parameters.cloneSpecialFiles };
        const request = {
          pvc,
          pvName,
          path: relative,
          dataSource,
          volume,
          pathOf: (pv: Readonly<V1PersistentVolume>) =>
            restore ? snapshotPathOf(pv, snapshotPath) : this.#export.directoryOf(pv),
        };
        const step = await jobs.step(request, context);
        if (!step.ended) return { error: new Error(step.message), state: 'Background' };
        return { pv: this.#persistentVolume(options, parameters, relative) };
      }
      const fromPvName = takeBackSource(pvc, pvName);
      if (fromPvName !== undefined) {
        const request = { owner, fromPvName, fromNamespaces: parameters.takeBackFromNamespaces, pvc };
        const modes = { mode: directoryMode, parentMode };
        await takeBack(this.#root, relative, { ...request, ...modes }, context, this.#events);
        return { pv: this.#persistentVolume(options, parameters, relative) };
      }
      if (parameters.adoptExisting) await this.#refuseHostingVolumes(relative, context);
      const gid = await allocateVolumeGid(this.#gids, options, parameters, context);
      context.signal.throwIfAborted();
      const outcome = await this.#createVolume(
        relative,
        {
          owner,
          mode: volumeModeWithGid(directoryMode, gid),
          gid,
          parentMode,
          adopt: parameters.adoptExisting,
          namespaceScopedPath: rendersUnderNamespace(parameters.pathPattern),
          adoptAmbiguousNamespacePrefix: parameters.adoptAmbiguousNamespacePrefix,
          beforeEachWrite: () => context.assertLeader(),
        },
        context,
      );
      // A freeze during the step (a paused process, a lost Lease) ends the term here: the directory
      // is the claim's either way, and the new leader's retry reuses it.
      context.assertLeader();
      if (outcome === 'adopted') {
        const message = `adopted the existing directory ${relative} with its data (StorageClass parameter adoptExisting)`;
        context.logger.info({ path: relative }, message);
        this.#events?.event(
          { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...pvc },
          'Normal',
          reasonAdopted,
          message,
        );
      }
      context.logger.info({ path: relative, outcome, gid }, 'volume directory ready');
      const pv = this.#persistentVolume(
        options,
        parameters,
        relative,
        outcome === 'adopted' ? undefined : gid,
      );
      // Adopted data keeps its owner and group, so its PV names no GID: the one allocated goes back.
      if (outcome === 'adopted' && gid !== undefined) this.#gids?.forget(options);
      return { pv };
    } catch (err) {
      // Bad paths and permission refusals slow the retries down; ownership and symlink refusals
      // stay plain errors with an event. A permission refusal's event says how to fix it.
      return provisionFailure(this.#explainRefusal(err), isPersistentRefusal);
    }
  }

  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    await removeVolume(this.#removal, pv, context);
    // The data is gone or kept for good: the GID is free once the PV object is gone too.
    this.#gids?.release(pv);
  }

  #persistentVolume(
    { pvName, pvc, storageClass }: ProvisionOptions,
    parameters: ClassParameters,
    relative: RelativeVolumePath,
    gid?: number,
  ): V1PersistentVolume {
    return buildPersistentVolume({
      gid,
      pvName,
      pvc,
      storageClass,
      server: this.#export.server,
      path: this.#export.pvPath(relative),
      onDelete: parameters.onDelete,
      archiveRetention: parameters.archiveRetention,
    });
  }

  /**
   * A refusal with its cause and what to change: an NFS mount's (root_squash, a file held open,
   * a read-only or full export), else a permission refusal's identity and ways out. Any other error
   * unchanged.
   */
  #explainRefusal(err: unknown): unknown {
    return explainNfsError(err, this.#root.base) ?? explainPermissionError(err, this.#root.base);
  }

  /**
   * Grows a volume: recorded only. An NFS client cannot limit a directory of a remote export, so
   * nothing changes on the export; the controller records the new capacity on the PV and the claim,
   * as csi-driver-nfs does.
   */
  async expand(options: ExpandOptions): Promise<ExpandResult> {
    return { capacity: options.capacity };
  }

  /**
   * Starts taking snapshots for this term, when snapshots are on. Removes the archives whose
   * retention has passed (`archiveRetention`, `--archive-retention`), as the leader, one fenced delete
   * each; an archive without an ownership record is never removed. Then measures the volumes' usage,
   * when usage reporting is on.
   */
  async maintain(context: OperationContext): Promise<void> {
    this.#snapshots?.start(context);
    await sweepExpiredArchives(this.#root, this.#archiveMetrics, context, this.#archiveSizes);
    if (this.#usage === undefined) return;
    const scope = { provisionerName: this.#provisionerName, exportPath: this.#export.path };
    await measureOwnedVolumes(this.#usage, scope, context);
  }

  /**
   * Refuses a render that holds another PV's directory of this export below it: adopting it would
   * hand that volume's data to this claim, and this claim's Delete would remove it. The upstream
   * programs' nested volumes have no record and may have any name, so only the API knows them.
   */
  async #refuseHostingVolumes(relative: RelativeVolumePath, context: OperationContext): Promise<void> {
    if (this.#owners === undefined) return;
    // Only an existing directory can be adopted: a new one costs no list of every PV. The lookup is
    // a hint that follows links; the adoption itself never does.
    const existing = await lstat(joinBasePath(this.#root.base, relative)).catch((err: unknown) =>
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : true,
    );
    if (existing === undefined) return;
    const prefix = `${this.#export.pvPath(relative)}/`;
    const { items } = await this.#owners.volumes.list({ signal: context.signal });
    const hosted = items.find(
      (pv) => pv.spec?.nfs?.server === this.#export.server && pv.spec.nfs.path.startsWith(prefix),
    );
    if (hosted === undefined) return;
    throw new InfeasibleError(
      `${relative} holds the directory of another PersistentVolume (${hosted.spec?.nfs?.path}); adopting it would hand that volume's data to this claim and its Delete would remove it, so it is refused`,
    );
  }

  /**
   * Creates (or reuses, or adopts) the volume directory. A refusal because of a stale record (its
   * claim and PV are gone, typically after a rollback) releases that record and tries once more.
   */
  async #createVolume(
    relative: RelativeVolumePath,
    options: CreateVolumeOptions,
    context: OperationContext,
  ): Promise<CreateVolumeOutcome> {
    try {
      return await this.#root.createVolume(relative, options);
    } catch (err) {
      if (!isSafeFsError(err) || err.kind !== 'ownership') throw err;
      if (!(await this.#releaseStaleRecord(relative, options.owner.claimUid, context))) throw err;
    }
    try {
      return await this.#root.createVolume(relative, options);
    } catch (err) {
      if (!isSafeFsError(err) || err.kind !== 'ownership') throw err;
      throw new Error(releasedStaleDataMessage(relative), { cause: err });
    }
  }

  /** Releases the record of `relative` when it is stale; returns whether it did. */
  async #releaseStaleRecord(
    relative: RelativeVolumePath,
    claimUid: string,
    context: OperationContext,
  ): Promise<boolean> {
    if (this.#owners === undefined) return false;
    const record = await this.#root.readRecord(relative);
    if (record === undefined || record.releasedAt !== undefined || record.claimUid === claimUid) return false;
    if (!(await isStaleRecord(record, this.#owners, context.signal))) return false;
    const outcome = await this.#root.releaseVolume(relative, {
      pvName: record.pvName,
      recordIsStale: true,
      beforeEachWrite: () => context.assertLeader(),
    });
    context.logger.warn(
      { path: relative, outcome },
      'released a stale ownership record: neither the claim nor the PV it names exists any more',
    );
    return true;
  }
}
