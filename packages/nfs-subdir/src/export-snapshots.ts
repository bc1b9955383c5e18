/**
 * Where NFS exports keep their `DirectorySnapshot`s, for the controller's shared snapshot taker: an
 * export's root, a source PV's directory (its `nfs.path` below the export, on this server) and
 * safe-fs's snapshot area at the top of the export. With several exports a snapshot is kept on its
 * source's export, and found again there (by its ownership record) to be restored or deleted.
 */
import { type ClaimDataSource, InfeasibleError } from '@kube-provisioner/controller';
import { cloneSource } from '@kube-provisioner/controller/clone';
import {
  type SnapshotReader,
  type SnapshotStorage,
  snapshotSourceAccess,
} from '@kube-provisioner/controller/snapshot';
import { type RelativeVolumePath, snapshotPath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { answerWithin } from './export-placement.ts';
import type { NfsExport } from './nfs-export.ts';

/** The snapshots of the export `nfsExport`, mounted at `root`. */
export function exportSnapshotStorage(
  root: VolumeRoot,
  nfsExport: NfsExport,
): SnapshotStorage<RelativeVolumePath> {
  return { volumes: root, sourcePathOf: (pv) => nfsExport.directoryOf(pv), snapshotPathOf: snapshotPath };
}

/** One export of several, as its snapshots need it. */
export interface SnapshotExport {
  readonly nfsExport: NfsExport;
  readonly root: VolumeRoot;
}

/** A directory on one export of several. */
export interface ExportPath {
  readonly root: VolumeRoot;
  readonly path: RelativeVolumePath;
}

/** The export below which `pv`'s directory lies, and that directory; `undefined` when on none. */
function exportPathOf(exports: readonly SnapshotExport[], pv: Readonly<V1PersistentVolume>) {
  for (const { nfsExport, root } of exports) {
    try {
      return { root, path: nfsExport.directoryOf(pv) };
    } catch {
      // Another export's volume, or none's.
    }
  }
  return undefined;
}

/**
 * The export of `exports` holding the snapshot with object UID `uid` in `namespace`: the first whose
 * snapshot area has its ownership record (made before anything is copied), `undefined` when every
 * export answered without it. Each export gets `timeoutMs` to answer, so a hung mount holds no worker.
 *
 * @throws Error (tried again later) when none has it and one did not answer: the data may be there.
 */
export async function snapshotExport<E extends SnapshotExport>(
  exports: readonly E[],
  namespace: string,
  uid: string,
  timeoutMs: number,
): Promise<E | undefined> {
  const path = snapshotPath(namespace, uid);
  const silent: string[] = [];
  for (const served of exports) {
    const what = `the export mounted at ${served.root.base}`;
    try {
      if ((await answerWithin(served.root.readRecord(path), timeoutMs, what)) !== undefined) return served;
    } catch (err) {
      silent.push((err as Error).message);
    }
  }
  if (silent.length === 0) return undefined;
  throw new Error(`snapshot ${namespace}/${uid} was looked for on every export, and ${silent.join('; ')}`);
}

/**
 * The export of `exports` holding the snapshot a claim `pvc` is restored from (`dataSource`), checked
 * as a restore's source is (ready, this provisioner's, no larger than the request).
 *
 * @throws as `cloneSource` while the snapshot is missing or not ready; Error when no export has its data.
 */
export async function restoredSnapshotExport<E extends SnapshotExport>(
  exports: readonly E[],
  snapshots: SnapshotReader,
  dataSource: ClaimDataSource,
  pvc: Readonly<V1PersistentVolumeClaim>,
  provisionerName: string,
  context: { readonly signal: AbortSignal; readonly timeoutMs: number },
): Promise<E> {
  const access = snapshotSourceAccess(snapshots);
  const source = await cloneSource(access, dataSource, pvc, provisionerName, context.signal);
  const { namespace = '', uid = '' } = source.pv.spec?.claimRef ?? {};
  const served = await snapshotExport(exports, namespace, uid, context.timeoutMs);
  if (served !== undefined) return served;
  throw new Error(
    `the data of snapshot ${namespace}/${dataSource.name} is on none of this provisioner's exports`,
  );
}

/**
 * The snapshots of several exports: each kept in the snapshot area of its source's export, so that
 * taking one copies within one file system and a restore is made on that export. `timeoutMs` bounds
 * each export's answer when a snapshot is looked for (see {@link snapshotExport}).
 */
export function severalExportsSnapshotStorage(
  exports: readonly SnapshotExport[],
  timeoutMs: number,
): SnapshotStorage<ExportPath> {
  return {
    volumes: {
      cloneVolume(source, path, options) {
        if (source.root !== path.root) throw new Error('a snapshot is copied on its source’s export only');
        return path.root.cloneVolume(source.path, path.path, options);
      },
      createVolume: (at, options) => at.root.createVolume(at.path, options),
      removeCloneLeftover: (at, options) => at.root.removeCloneLeftover(at.path, options),
      deleteVolume: (at, options) => at.root.deleteVolume(at.path, options),
      releaseVolume: (at, options) => at.root.releaseVolume(at.path, options),
    },
    sourcePathOf(pv) {
      const found = exportPathOf(exports, pv);
      if (found !== undefined) return found;
      const nfs = pv.spec?.nfs;
      throw new InfeasibleError(
        `the source volume ${pv.metadata?.name} (${nfs?.server}:${nfs?.path}) is below none of this provisioner's exports`,
      );
    },
    async snapshotPathOf(namespace, uid, source) {
      const path = snapshotPath(namespace, uid);
      if (source !== undefined) return { root: source.root, path };
      // Never copied (its source never found): nothing to remove on any export, the first will do.
      const served = (await snapshotExport(exports, namespace, uid, timeoutMs)) ?? exports[0];
      if (served === undefined) throw new Error('no export');
      return { root: served.root, path };
    },
  };
}
