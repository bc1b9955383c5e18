/**
 * The NFS subdirectory provisioner behind the `nfs-subdir-provisioner` program: `NfsProvisioner` (one
 * export) and `SeveralExportsProvisioner`, their class parameters, command-line options, RBAC rules
 * and archive metrics.
 *
 * Stability: experimental. The stable interface of this package is its command-line program, flags,
 * class parameters and annotations; these library exports serve that program, the tests and the
 * chaos suite, and may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { CloneSourceAccess } from '@kube-provisioner/controller/clone';
export type { ArchiveSweepCounts, ArchiveSweepSink } from './archive-metrics.ts';
export { ArchiveMetrics, archiveMetricNames } from './archive-metrics.ts';
export { exportSelectorParameter } from './class-exports.ts';
export type { ClassParameters, LegacyDeletePolicy, NfsDialect } from './class-parameters.ts';
export { legacyDeletePolicy, parseClassParameters } from './class-parameters.ts';
export type {
  NfsCliOptions,
  NfsCommonCliOptions,
  NfsSeveralExportsOptions,
  NfsSingleExportOptions,
} from './cli-options.ts';
export { parseCliOptions, UsageError, usage } from './cli-options.ts';
export type { DeletePolicy } from './delete-policy.ts';
export { annOnDelete } from './delete-policy.ts';
export { ownPod, reasonExportAvailable, reasonExportUnavailable } from './export-health-events.ts';
export type { NfsExportConfig } from './export-list.ts';
export { parseExportList } from './export-list.ts';
export { ExportMetrics, exportMetricNames } from './export-metrics.ts';
export type { ExportSpace, StatFs } from './export-placement.ts';
export { exportsParameter } from './export-placement.ts';
export type { NfsProvisionerOptions } from './nfs-provisioner.ts';
export { defaultMountRoot, NfsProvisioner } from './nfs-provisioner.ts';
export type { PlacementPolicy } from './placement-policy.ts';
export { placementParameter, placementPolicies } from './placement-policy.ts';
export type { PolicyRule } from './rbac-rules.ts';
export { clusterRules, namespaceRules } from './rbac-rules.ts';
export type { NfsCli } from './run-cli.ts';
export { runNfsProvisionerCli } from './run-cli.ts';
export type { SeveralExportsProvisionerOptions, WriteProbe } from './several-exports-provisioner.ts';
export { defaultStatfsTimeoutMs, SeveralExportsProvisioner } from './several-exports-provisioner.ts';
export type { ExportVolume, SeveralExportsUsage } from './several-exports-usage.ts';
export { exportVolumeScanner } from './several-exports-usage.ts';
export type { OwnerLookup } from './stale-record.ts';
export { annTakeBackFrom } from './take-back-request.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export type { StorageClassReader } from './volume-delete-policy.ts';
export type { VolumeEventSink } from './volume-events.ts';
export type { NfsUsageReporting, NfsVolume, NfsVolumeScope } from './volume-usage.ts';
export { measureOwnedVolumes, ownedNfsVolume } from './volume-usage.ts';
