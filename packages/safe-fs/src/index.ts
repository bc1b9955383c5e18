/**
 * Symlink-safe, root-contained directories for volumes: the layer the bundled provisioners share
 * (`VolumeRoot` and the file-system access under it), with the path patterns, ownership records and
 * usage scans built on it.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type { AdoptionRequest } from './adoption.ts';
export { joinBasePath, normalizeBasePath, relativePathUnder } from './base-path.ts';
export type { SafeFsErrorInit, SafeFsErrorKind } from './errors.ts';
export { isPermissionError, isPersistentRefusal, isSafeFsError, SafeFsError } from './errors.ts';
export type { ReflinkPolicy } from './extent-sharing.ts';
export type { FsDirectory, FsFile, FsOps, FsPath } from './fs-ops.ts';
export { localFsOps, nodeFsOps } from './fs-ops.ts';
export type { RootFsOps } from './fs-ops-for-root.ts';
export { fsOpsForRoot } from './fs-ops-for-root.ts';
export type { OwnershipRecord, VolumeOwner } from './ownership-record.ts';
export type { ClaimMetadata, PathPatternValues } from './path-pattern.ts';
export { renderPathPattern, resolveVolumePath } from './path-pattern.ts';
export { checkWritableDirectory, explainPermissionError, permissionFix } from './permission-advice.ts';
export type { RecordedVolume } from './recorded-volume-search.ts';
export type { RelativeVolumePath } from './relative-volume-path.ts';
export { parseRelativeVolumePath } from './relative-volume-path.ts';
// The reserved names, for tools that read an export's records and parent markers (the audit).
export { adoptionLockName, isReservedName, parentMarkerName, recordName } from './reserved-names.ts';
export { isSnapshotPath, snapshotAreaName, snapshotPath } from './snapshot-area.ts';
export type { SweepReport } from './temporary-files.ts';
export type { UsageScanOptions, VolumeUsage } from './usage-scan.ts';
export { scanVolumeUsage, volumeUsageScanner } from './usage-scan.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export type {
  ArchiveVolumeOptions,
  ArchiveVolumeResult,
  CloneVolumeOptions,
  CopyProgress,
  CopyTreeOptions,
  CreateVolumeOptions,
  CreateVolumeOutcome,
  DeleteVolumeOptions,
  DeleteVolumeOutcome,
  ExpiredArchivesOptions,
  ExpiredArchivesReport,
  ReleaseVolumeOutcome,
  RemoveVolumeOptions,
  SpecialFilePolicy,
  TakeBackOptions,
  TakeBackOutcome,
  TakeBackResult,
  VolumeRootOptions,
} from './volume-root.ts';
export { VolumeRoot } from './volume-root.ts';
export type { WriteGuard } from './write-guard.ts';
