export type { ArchiveSweepCounts } from './archive-metrics.ts';
export { ArchiveMetrics, archiveMetricNames } from './archive-metrics.ts';
export type { ClassParameters, LegacyDeletePolicy, NfsDialect } from './class-parameters.ts';
export { legacyDeletePolicy, parseClassParameters } from './class-parameters.ts';
export type { NfsCliOptions } from './cli-options.ts';
export { parseCliOptions, UsageError, usage } from './cli-options.ts';
export type { CloneSourceAccess } from './clone-source.ts';
export type { DeletePolicy } from './delete-policy.ts';
export { annOnDelete } from './delete-policy.ts';
export type { NfsProvisionerOptions, StorageClassReader, VolumeEventSink } from './nfs-provisioner.ts';
export { defaultMountRoot, NfsProvisioner } from './nfs-provisioner.ts';
export type { PolicyRule } from './rbac-rules.ts';
export { clusterRules, namespaceRules } from './rbac-rules.ts';
export type { NfsCli } from './run-cli.ts';
export { runNfsProvisionerCli } from './run-cli.ts';
export type { OwnerLookup } from './stale-record.ts';
export { annTakeBackFrom } from './take-back-request.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
