/**
 * Where one provisioner keeps its snapshots, the part of taking them that is its own: the volume
 * operations of its root (safe-fs's `VolumeRoot` fits), the directory of a source PV's volume and
 * the directory of a snapshot. Everything else (the watch, claiming, status, events, metrics,
 * restores) is the shared `SnapshotTaker`'s.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { CloneProgress } from '../clone/clone-progress.ts';

/**
 * What a snapshot's directory is made with: the owner its ownership record names (the snapshot
 * object, recorded as `snapshot-<uid>`) and the modes of a private area (safe-fs's
 * `CreateVolumeOptions` fits).
 */
export interface SnapshotVolumeSettings {
  readonly owner: {
    readonly claimUid: string;
    readonly namespace: string;
    readonly claimName: string;
    readonly pvName: string;
    readonly provisioner: string;
  };
  readonly mode: number;
  readonly parentMode: number;
  readonly ownParentsOnly: boolean;
}

/** The fence of a change to a snapshot's directory: its record must name `pvName`; `beforeEachWrite` throws once the term ended. */
export interface SnapshotFence {
  readonly pvName: string;
  readonly beforeEachWrite: () => void;
}

/** The volume operations snapshots need, with safe-fs's semantics (its `VolumeRoot` fits). */
export interface SnapshotVolumes<Path> {
  /** Makes `path` a copy of volume `source` (whose record names `sourcePvName`); run again after a kill, it starts over. */
  cloneVolume(
    source: Path,
    path: Path,
    options: SnapshotVolumeSettings & {
      readonly sourcePvName: string;
      readonly specialFiles: 'skip';
      readonly signal: AbortSignal;
      readonly beforeEachWrite: () => void;
    },
  ): Promise<CloneProgress>;
  /** Makes volume `path`, or finds it made (a half-made one is made whole). */
  createVolume(
    path: Path,
    options: SnapshotVolumeSettings & { readonly beforeEachWrite: () => void },
  ): Promise<unknown>;
  /** Removes what a copy into `path` killed half-way left beside it. */
  removeCloneLeftover(path: Path, options: SnapshotFence): Promise<unknown>;
  /** Removes volume `path` and its record. */
  deleteVolume(path: Path, options: SnapshotFence): Promise<unknown>;
  /** Keeps volume `path`, its record marked released. */
  releaseVolume(path: Path, options: SnapshotFence): Promise<unknown>;
}

/** One provisioner's snapshots: its root's operations and where sources and snapshots are on it. */
export interface SnapshotStorage<Path> {
  readonly volumes: SnapshotVolumes<Path>;
  /**
   * The directory of the source PV's volume (one this provisioner made).
   *
   * @throws InfeasibleError when this instance cannot copy it (outside its root, say).
   */
  sourcePathOf(pv: Readonly<V1PersistentVolume>): Path;
  /**
   * The directory of the snapshot with object UID `uid` in `namespace` (safe-fs's `snapshotPath`
   * fits): with `source`, of one about to be copied from that volume (a root of several keeps it
   * beside its source); without, of one copied before, which a root of several looks up.
   */
  snapshotPathOf(namespace: string, uid: string, source?: Path): Path | Promise<Path>;
}
