/**
 * Where an NFS export keeps its `DirectorySnapshot`s, for the controller's shared snapshot taker:
 * the export's root, a source PV's directory (its `nfs.path` below the export, on this server) and
 * safe-fs's snapshot area at the top of the export. A provisioner serving several exports takes no
 * snapshots yet: it refuses them, saying so in each snapshot's status and a Warning event.
 */
import {
  type SnapshotAccess,
  type SnapshotStorage,
  SnapshotTaker,
} from '@kube-provisioner/controller/snapshot';
import { type RelativeVolumePath, snapshotPath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import type { NfsExport } from './nfs-export.ts';

/** The snapshots of the export `nfsExport`, mounted at `root`. */
export function exportSnapshotStorage(
  root: VolumeRoot,
  nfsExport: NfsExport,
): SnapshotStorage<RelativeVolumePath> {
  return { volumes: root, sourcePathOf: (pv) => nfsExport.directoryOf(pv), snapshotPathOf: snapshotPath };
}

/** Why a provisioner serving several exports (`NFS_EXPORTS`) takes no snapshots. */
export const severalExportsSnapshotRefusal =
  'snapshots are not taken by a provisioner serving several exports (NFS_EXPORTS) yet; a provisioner of one export (NFS_SERVER, NFS_PATH) takes them';

function refused(): never {
  throw new Error(severalExportsSnapshotRefusal);
}

/**
 * The snapshot taker of a provisioner serving several exports: every snapshot of its claims gets
 * {@link severalExportsSnapshotRefusal} and is left unclaimed; nothing is written to any export.
 */
export function refusingSnapshotTaker(access: SnapshotAccess, provisionerName: string): SnapshotTaker<never> {
  const volumes = {
    cloneVolume: refused,
    createVolume: refused,
    removeCloneLeftover: refused,
    deleteVolume: refused,
    releaseVolume: refused,
  };
  const storage = { volumes, sourcePathOf: refused, snapshotPathOf: refused };
  return new SnapshotTaker<never>({
    ...access,
    storage,
    provisionerName,
    refusal: severalExportsSnapshotRefusal,
  });
}
