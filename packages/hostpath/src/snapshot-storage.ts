/**
 * Where a hostpath root keeps its `DirectorySnapshot`s, for the controller's shared snapshot taker:
 * the root's volume operations, a source PV's directory as a clone finds it, and safe-fs's snapshot area.
 */
import type { SnapshotStorage } from '@kube-provisioner/controller/snapshot';
import { type RelativeVolumePath, snapshotPath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import { type CloneScope, sourcePathOf } from './clone-request.ts';

/** The snapshots of `root`, serving the volumes of `scope`. */
export function hostPathSnapshotStorage(
  root: VolumeRoot,
  scope: CloneScope,
): SnapshotStorage<RelativeVolumePath> {
  return { volumes: root, sourcePathOf: (pv) => sourcePathOf(pv, scope), snapshotPathOf: snapshotPath };
}
