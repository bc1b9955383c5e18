/**
 * `DirectorySnapshot`s (`snapshot.kube-provisioner.io/v1alpha1`) for any provisioner of directory
 * volumes: the custom resource, the leader's {@link SnapshotTaker} (watch, claim, copy, status,
 * events, metrics, deletion, the class bounds' sweep) and the restore adapter for the background clones
 * ({@link snapshotSourceAccess}). The copy and its places are the provisioner's ({@link SnapshotStorage};
 * safe-fs's `VolumeRoot` and `snapshotPath` fit).
 *
 * Stability: experimental (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { DirectorySnapshot, SnapshotDeletionPolicy, SnapshotError } from './directory-snapshot.ts';
export {
  annSnapshotProvisioner,
  deletionPolicyOf,
  directorySnapshots,
  snapshotFinalizer,
  snapshotGroup,
  snapshotKind,
  snapshotRecordName,
} from './directory-snapshot.ts';
export type { SnapshotAccess } from './snapshot-access.ts';
export type { ExpiredSnapshot, SnapshotBoundName, SnapshotBounds } from './snapshot-bounds.ts';
export {
  expiredSnapshots,
  isSnapshotBoundName,
  parseSnapshotBounds,
  snapshotBoundNames,
} from './snapshot-bounds.ts';
export { SnapshotMetrics, snapshotMetricNames } from './snapshot-metrics.ts';
export { snapshotRules } from './snapshot-rules.ts';
export type { SnapshotReader } from './snapshot-source.ts';
export { snapshotPathOf, snapshotSourceAccess } from './snapshot-source.ts';
export type {
  SnapshotFence,
  SnapshotStorage,
  SnapshotVolumeSettings,
  SnapshotVolumes,
} from './snapshot-storage.ts';
export { annSnapshotSourceClaimUid, reasonSnapshotExpired } from './snapshot-sweep.ts';
export type { SnapshotTakerOptions } from './snapshot-taker.ts';
export { reasonSnapshotFailed, reasonSnapshotReady, SnapshotTaker } from './snapshot-taker.ts';
export type { SnapshotSync, SnapshotWatchTimings } from './snapshot-watch.ts';
export { needsSync, watchSnapshots } from './snapshot-watch.ts';
