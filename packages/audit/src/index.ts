/**
 * A read-only orphan audit of a provisioner's volumes: compares the PVs the API server holds with
 * the directories under the export or host root. {@link auditVolumes} is the library call; the
 * `kube-provisioner-audit` CLI wraps it.
 *
 * Stability: experimental. The stable interface of this package is its command-line program
 * `kube-provisioner-audit`, its flags, output and exit codes; these library exports serve that
 * program and the chaos suite, and may change in a minor release (see "Versioning" in the
 * repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { AuditOptions, AuditReport } from './audit.ts';
export { auditVolumes, defaultGraceMs } from './audit.ts';
export type { ClusterState } from './cluster-state.ts';
export { readClusterState } from './cluster-state.ts';
export type {
  ArchiveListing,
  AuditSummary,
  ClaimReference,
  Finding,
  FindingKind,
  JudgeInput,
  Judgement,
} from './findings.ts';
export { findingKinds, judge } from './findings.ts';
export type { OutputFormat } from './report-format.ts';
export { formatJson, formatTable } from './report-format.ts';
export type { AuditCliHost } from './run-cli.ts';
export { exitClean, exitError, exitFindings, runAuditCli } from './run-cli.ts';
export type { SnapshotAudit, SnapshotListing, SnapshotState } from './snapshot-listing.ts';
export { listSnapshots } from './snapshot-listing.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export type {
  HostPathLayout,
  NfsLayout,
  ProvisionerKind,
  VolumeLayout,
  VolumeLocation,
} from './volume-layout.ts';
export { isAuditedHere, locateVolume, provisionerKinds } from './volume-layout.ts';
export type { LeftoverFile, ScannedVolume, ScanOptions, UnreadableEntry, VolumeScan } from './volume-scan.ts';
export { isArchivedPath, isUpstreamVolumeName, scanVolumeRoot } from './volume-scan.ts';
