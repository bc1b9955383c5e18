/**
 * The NFS {@link Provisioner} of an installation that serves several exports: one
 * {@link NfsProvisioner} per export, a new volume placed among its class's exports by its policy,
 * and everything else routed by the PV's `nfs.server` and `nfs.path`, so no state outside the PVs
 * and the exports decides which export a volume is on.
 */
import { access, lstat, statfs as nodeStatfs } from 'node:fs/promises';
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
import type { KubeObject } from '@kube-provisioner/controller/client';
import { storageBytes } from '@kube-provisioner/controller/client';
import { cloneSource } from '@kube-provisioner/controller/clone';
import type { EventType } from '@kube-provisioner/controller/events';
import { GidAllocator } from '@kube-provisioner/controller/gid-allocator';
import type { DataSourceKind } from '@kube-provisioner/controller/provisioner';
import { SnapshotTaker, snapshotKind } from '@kube-provisioner/controller/snapshot';
import { listMeasuredVolumes } from '@kube-provisioner/controller/usage';
import {
  checkWritableDirectory,
  joinBasePath,
  type OwnershipRecord,
  type RelativeVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ArchiveMetrics } from './archive-metrics.ts';
import { classExportsOf } from './class-exports.ts';
import { parseClassParameters } from './class-parameters.ts';
import { reasonExportAvailable, reasonExportUnavailable } from './export-health-events.ts';
import type { NfsExportConfig } from './export-list.ts';
import type { ExportMetrics } from './export-metrics.ts';
import { answerWithin, type ExportSpace, exportSpace, type StatFs } from './export-placement.ts';
import {
  type ExportPath,
  restoredSnapshotExport,
  severalExportsSnapshotStorage,
} from './export-snapshots.ts';
import { NfsExport } from './nfs-export.ts';
import { NfsProvisioner, type NfsProvisionerOptions } from './nfs-provisioner.ts';
import { type PlacementPolicy, PlacementTurns } from './placement-policy.ts';
import type { ExportVolume, SeveralExportsUsage } from './several-exports-usage.ts';
import { takeBackSource } from './take-back-request.ts';
import { volumePathFor } from './volume-path.ts';
import { ownedNfsVolume } from './volume-usage.ts';

/**
 * Options of {@link SeveralExportsProvisioner}: those of every export's provisioner, and the exports.
 * `clones.registry` is not used yet: each export's clone jobs would register the same metric names.
 * `snapshots` are taken by one taker over every export, each on its source's export (`export-snapshots.ts`).
 */
export interface SeveralExportsProvisionerOptions
  extends Omit<NfsProvisionerOptions, 'server' | 'exportPath' | 'mountRoot' | 'usage' | 'archiveMetrics'> {
  /** The exports, as `NFS_EXPORTS` lists them; at least one. */
  readonly exports: readonly NfsExportConfig[];
  /**
   * Counts what every export's archive retention keeps and removes, in one set of series; none
   * without it. The archives are not sized (no byte metrics) with several exports yet.
   */
  readonly archiveMetrics?: ArchiveMetrics | undefined;
  /**
   * Usage reporting: each `maintain` call measures the volumes of every export through one monitor
   * (its `measure` typically {@link exportVolumeScanner}). Absent: no usage is measured.
   */
  readonly usage?: SeveralExportsUsage | undefined;
  /** Publishes each export's size, free space, health and placements; none without it. */
  readonly metrics?: ExportMetrics | undefined;
  /**
   * The provisioner's own Pod (see {@link ownPod}): with `events`, an export going down and coming
   * back is recorded on it ({@link reasonExportUnavailable}, {@link reasonExportAvailable}). None
   * without it: only logged.
   */
  readonly pod?: KubeObject | undefined;
  /** Reads an export's free space from its mount root; tests inject one. Default: the real statfs. */
  readonly statfs?: StatFs | undefined;
  /**
   * Asks whether an export's mount root is writable (`access(path, W_OK | X_OK)`: `EROFS` on a
   * read-only mount); tests inject one. Default: the real `access`.
   */
  readonly writeProbe?: WriteProbe | undefined;
  /**
   * How long a placement waits for an export's statfs (and record lookup) before leaving that export
   * out, in ms. Default {@link defaultStatfsTimeoutMs}.
   */
  readonly statfsTimeoutMs?: number | undefined;
}

/** The part of `fs.promises.access` the write probe of an export needs. */
export type WriteProbe = (path: string, mode: number) => Promise<void>;

interface Served {
  readonly config: NfsExportConfig;
  readonly nfsExport: NfsExport;
  /** Reads records only: to find the export a retried or taken-back volume is already on. */
  readonly root: VolumeRoot;
  readonly provisioner: NfsProvisioner;
}

/** How long a placement waits for an export's statfs by default: 10 s. */
export const defaultStatfsTimeoutMs = 10_000;

// The depth safe-fs's take-back searches for the records of a PV.
const takeBackSearchDepth = 4;

/** Places volumes on several NFS exports and routes each PV to its own. */
export class SeveralExportsProvisioner implements Provisioner {
  readonly #served: readonly Served[];
  readonly #statfs: StatFs;
  readonly #writeProbe: WriteProbe;
  readonly #options: SeveralExportsProvisionerOptions;
  /** The exports whose last statfs failed, to log each change once. */
  readonly #down = new Set<string>();
  /** The statfs calls still running, by mount root. */
  readonly #statfsCalls = new Map<string, ReturnType<StatFs>>();
  /** Each class's turn under `placement: round-robin` or `weighted`. */
  readonly #turns = new PlacementTurns();
  /** Takes the snapshots of every export's claims, each on its source's export. */
  readonly #snapshots: SnapshotTaker<ExportPath> | undefined;
  /** PersistentVolumeClaim (a clone) when clones are configured, else none. */
  readonly dataSources: readonly DataSourceKind[];

  /** @throws Error when no export is given, or as {@link NfsProvisioner} for one of them. */
  constructor(options: SeveralExportsProvisionerOptions) {
    if (options.exports.length === 0) throw new Error('at least one export is needed');
    const {
      exports,
      statfs,
      writeProbe,
      statfsTimeoutMs: _timeout,
      usage: _usage,
      archiveMetrics,
      metrics: _metrics,
      pod: _pod,
      snapshots,
      ...shared
    } = options;
    // One allocator for all exports: a GID is unique among the class's PVs, whatever their export.
    const gids =
      shared.gids ??
      (shared.owners === undefined ? undefined : new GidAllocator({ volumes: shared.owners.volumes }));
    // Each export's clone jobs would register the same metric names in one registry.
    const clones = shared.clones && { claims: shared.clones.claims, volumes: shared.clones.volumes };
    this.#served = exports.map((config) => ({
      config,
      nfsExport: new NfsExport(config.server, config.path),
      root: new VolumeRoot(config.mountRoot, { fs: shared.fs }),
      provisioner: new NfsProvisioner({
        ...shared,
        gids,
        clones,
        // Each export's provisioner restores; the snapshots of all are taken by one taker.
        snapshots: snapshots && { ...snapshots, take: false },
        server: config.server,
        exportPath: config.path,
        mountRoot: config.mountRoot,
        archiveMetrics: archiveMetrics?.forExport(config.name),
      }),
    }));
    this.#statfs = statfs ?? nodeStatfs;
    this.#writeProbe = writeProbe ?? access;
    this.#options = options;
    this.dataSources = this.#served[0]?.provisioner.dataSources ?? [];
    this.#snapshots =
      snapshots &&
      new SnapshotTaker({
        ...snapshots,
        storage: severalExportsSnapshotStorage(
          this.#served,
          options.statfsTimeoutMs ?? defaultStatfsTimeoutMs,
        ),
        provisionerName: shared.provisionerName,
      });
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    let served: Served;
    let forExport: ProvisionOptions;
    try {
      const { storageClass } = options;
      const { names, placement, parameters } = classExportsOf(
        storageClass.parameters,
        this.#served.map((s) => s.config),
      );
      forExport = { ...options, storageClass: { ...storageClass, parameters } };
      const candidates = this.#served.filter((s) => names.includes(s.config.name));
      served = await this.#exportFor(forExport, candidates, placement, context);
    } catch (err) {
      return provisionFailure(err);
    }
    context.logger.info({ export: served.config.name, pv: options.pvName }, 'export chosen for the volume');
    return served.provisioner.provision(forExport, context);
  }

  /**
   * The export of a new volume: a clone's is its source's, a take-back's the answering export
   * holding the data, a retried claim's the answering export already holding its directory;
   * otherwise the class's `placement` decides.
   */
  async #exportFor(
    options: ProvisionOptions,
    candidates: readonly Served[],
    placement: PlacementPolicy,
    context: OperationContext,
  ): Promise<Served> {
    const { pvc, pvName, dataSource } = options;
    const { clones, snapshots, provisionerName } = this.#options;
    if (
      dataSource?.kind === snapshotKind.kind &&
      dataSource.apiGroup === snapshotKind.apiGroup &&
      snapshots
    ) {
      const { snapshots: reader } = snapshots;
      const served = await restoredSnapshotExport(this.#served, reader, dataSource, pvc, provisionerName, {
        signal: context.signal,
        timeoutMs: this.#options.statfsTimeoutMs ?? defaultStatfsTimeoutMs,
      });
      if (!candidates.includes(served)) {
        throw new InfeasibleError(
          `a restore is made on its snapshot's export, ${served.config.name}, which the StorageClass does not select (parameters "exports", "exportSelector")`,
        );
      }
      return served;
    }
    if (dataSource !== undefined && clones !== undefined) {
      const source = await cloneSource(clones, dataSource, pvc, provisionerName, context.signal);
      const served = this.#exportOf(source.pv);
      if (!candidates.includes(served)) {
        throw new InfeasibleError(
          `a clone is made on its source's export, ${served.config.name}, which the StorageClass does not select (parameters "exports", "exportSelector")`,
        );
      }
      return served;
    }
    const from = takeBackSource(pvc, pvName);
    const spaces = await this.#spaces(candidates, context);
    // Only exports that answer are looked into: a look into a hung mount would hold a thread.
    const answering = candidates.filter((s) =>
      spaces.some((space) => space.name === s.config.name && !('error' in space)),
    );
    const found =
      from === undefined
        ? await this.#holdingClaim(options, answering)
        : await this.#holdingDataOf(from, answering);
    if (found !== undefined) return found;
    const name = this.#turns.place({
      className: options.storageClass.metadata?.name ?? '',
      policy: placement,
      spaces,
      weights: Object.fromEntries(candidates.map((s) => [s.config.name, s.config.weight ?? 1])),
      requestBytes: storageBytes(pvc.spec?.resources?.requests?.storage),
    });
    this.#options.metrics?.placed(name);
    const chosen = candidates.find((s) => s.config.name === name);
    if (chosen === undefined) throw new Error(`placement chose ${name}, which is not a candidate`);
    return chosen;
  }

  /** The free space of each of `exports`, published when metrics are on. */
  async #spaces(exports: readonly Served[], context: OperationContext): Promise<ExportSpace[]> {
    const timeoutMs = this.#options.statfsTimeoutMs ?? defaultStatfsTimeoutMs;
    const spaces = await Promise.all(
      exports.map((s) =>
        exportSpace(s.config.name, s.config.mountRoot, (path) => this.#statfsOf(path), timeoutMs),
      ),
    );
    this.#options.metrics?.measured(spaces);
    // Said once per change, not per claim; placement asks each time.
    for (const space of spaces) {
      const down = 'error' in space;
      if (down === this.#down.has(space.name)) continue;
      const served = exports.find((s) => s.config.name === space.name);
      const where = served && `${served.nfsExport.server}:${served.nfsExport.path}`;
      if (down) {
        this.#down.add(space.name);
        context.logger.warn({ export: space.name, err: space.error }, 'export left out of placement');
        this.#healthEvent(
          'Warning',
          reasonExportUnavailable,
          `export ${space.name} (${where}) is left out of placement, its deletes retried until it is available: ${space.error}`,
        );
      } else {
        this.#down.delete(space.name);
        context.logger.info({ export: space.name }, 'export available again: back in placement');
        this.#healthEvent(
          'Normal',
          reasonExportAvailable,
          `export ${space.name} (${where}) is available again: back in placement`,
        );
      }
    }
    return spaces;
  }

  #healthEvent(type: EventType, reason: string, message: string): void {
    const { events, pod } = this.#options;
    if (events !== undefined && pod !== undefined) events.event(pod, type, reason, message);
  }

  /**
   * The statfs of `mountRoot` and then whether it is writable (a read-only mount or export cannot take
   * new volumes): the check still running, if any. A hung mount holds a thread of the pool until it
   * answers, so it is asked once, not once per claim.
   */
  #statfsOf(mountRoot: string): ReturnType<StatFs> {
    const running = this.#statfsCalls.get(mountRoot);
    if (running !== undefined) return running;
    const call = this.#statfs(mountRoot)
      .then(async (stats) => {
        await checkWritableDirectory(mountRoot, this.#writeProbe);
        return stats;
      })
      .finally(() => this.#statfsCalls.delete(mountRoot));
    this.#statfsCalls.set(mountRoot, call);
    return call;
  }

  /**
   * The candidate already holding this claim's directory (a retry after its PV could not be saved),
   * or with `adoptExisting` the directory to adopt; `undefined` when none, or the path does not
   * render (the export's provisioner then says why). One record read per export.
   */
  async #holdingClaim(options: ProvisionOptions, candidates: readonly Served[]): Promise<Served | undefined> {
    const { pvc, pvName, storageClass } = options;
    let path: RelativeVolumePath;
    let adopt: boolean;
    try {
      const parameters = parseClassParameters(this.#options.dialect, storageClass.parameters);
      path = volumePathFor(parameters, pvc, pvName);
      adopt = parameters.adoptExisting;
    } catch {
      return undefined;
    }
    for (const served of candidates) {
      const record = await this.#answer(served.root.readRecord(path));
      if (record !== undefined && record.claimUid === pvc.metadata?.uid) return served;
      if (adopt && (await this.#answer(exists(joinBasePath(served.root.base, path))))) return served;
    }
    return undefined;
  }

  /** The first candidate holding a record of PV `from`: the data a claim takes back. */
  async #holdingDataOf(from: string, candidates: readonly Served[]): Promise<Served | undefined> {
    for (const served of candidates) {
      const wanted = (record: OwnershipRecord): boolean =>
        record.pvName === from || record.takenFrom === from;
      const found = await this.#answer(served.root.recordedVolumes(wanted, takeBackSearchDepth));
      if (found !== undefined && found.length > 0) return served;
    }
    return undefined;
  }

  /**
   * What a look at an export's files found, or `undefined` when it failed or gave no answer in time:
   * an export that does not answer cannot take the volume either, so it is left out, as placement
   * leaves it out (a directory of an earlier attempt there stays, for the audit to find).
   */
  async #answer<T>(call: Promise<T>): Promise<T | undefined> {
    const timeoutMs = this.#options.statfsTimeoutMs ?? defaultStatfsTimeoutMs;
    return answerWithin(call, timeoutMs, 'the export').catch(() => undefined);
  }

  /**
   * @throws Error (retried with back-off) naming the export when its last health check failed and
   * it still does not answer: a delete there would hold a volume worker until its server is back.
   */
  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    const served = this.#exportOf(pv);
    await this.#refuseUnavailable(served, context, 'the delete');
    await served.provisioner.delete(pv, context);
  }

  async expand(options: ExpandOptions): Promise<ExpandResult> {
    return this.#exportOf(options.pv).provisioner.expand(options);
  }

  /**
   * Every export's maintenance, one after the other (one export's failure does not skip the
   * others), then the usage of every export's volumes; an export whose statfs fails or gives no
   * answer is skipped, its volumes not measured.
   */
  async maintain(context: OperationContext): Promise<void> {
    this.#snapshots?.start(context);
    const failures: string[] = [];
    // Also the health check: a down export's maintenance and usage scans would hold the run.
    await this.#spaces(this.#served, context);
    for (const served of this.#served) {
      context.signal.throwIfAborted();
      // Logged once when it went down; its expired archives wait for the next run.
      if (this.#down.has(served.config.name)) continue;
      await served.provisioner.maintain(context).catch((err: unknown) => {
        failures.push(`${served.config.name}: ${(err as Error).message}`);
      });
    }
    const { usage, provisionerName } = this.#options;
    if (usage !== undefined) {
      const volumeOf = (pv: Readonly<V1PersistentVolume>): ExportVolume | undefined => {
        const served = this.#find(pv);
        if (served !== undefined && this.#down.has(served.config.name)) return undefined;
        const volume = served && ownedNfsVolume(pv, { provisionerName, exportPath: served.config.path });
        return volume && served && { ...volume, exportName: served.config.name };
      };
      const volumes = await listMeasuredVolumes(usage.volumes, volumeOf, context);
      await usage.monitor.refresh(volumes, context.signal, context.logger);
    }
    if (failures.length > 0) throw new Error(`maintenance failed on exports ${failures.join('; ')}`);
  }

  /**
   * Fails fast when `served`'s last health check failed: while its statfs still runs the mount still
   * hangs, so it is not asked again; otherwise it is asked once more (within the statfs timeout) and
   * an answer puts it back. An export never seen down is not asked: a healthy delete costs nothing.
   *
   * @throws Error naming the export, what failed and that `what` is retried.
   */
  async #refuseUnavailable(served: Served, context: OperationContext, what: string): Promise<void> {
    const { name, mountRoot } = served.config;
    if (!this.#down.has(name)) return;
    let reason = `its statfs from an earlier check has not answered yet`;
    if (!this.#statfsCalls.has(mountRoot)) {
      const [space] = await this.#spaces([served], context);
      if (space === undefined || !('error' in space)) return;
      reason = space.error;
    }
    throw new Error(
      `export ${name} (${served.nfsExport.server}:${served.nfsExport.path}) is unavailable: ${reason}; ${what} is retried until it is available`,
    );
  }

  /** The export `pv` is on: its server, and a path equal to or below the export's. */
  #find(pv: Readonly<V1PersistentVolume>): Served | undefined {
    const nfs = pv.spec?.nfs;
    return this.#served.find(({ nfsExport }) => {
      if (nfs?.server !== nfsExport.server) return false;
      const prefix = nfsExport.path === '/' ? '/' : `${nfsExport.path}/`;
      return nfs.path === nfsExport.path || nfs.path.startsWith(prefix);
    });
  }

  /**
   * The export `pv` is on (exports never overlap, so at most one matches).
   *
   * @throws Error when it is on none, naming the exports: nothing is touched.
   */
  #exportOf(pv: Readonly<V1PersistentVolume>): Served {
    const served = this.#find(pv);
    if (served !== undefined) return served;
    const nfs = pv.spec?.nfs;
    const where = nfs === undefined ? 'has no nfs source' : `is on ${nfs.server}:${nfs.path}`;
    const exports = this.#served.map((s) => `${s.config.name} (${s.nfsExport.server}:${s.nfsExport.path})`);
    throw new Error(
      `the volume ${where}, below none of this provisioner's exports ${exports.join(', ')}; refusing to touch anything`,
    );
  }
}

/** Whether anything is at `path` (a link counts; it is never followed). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (err: unknown) => (err as NodeJS.ErrnoException).code !== 'ENOENT',
  );
}
