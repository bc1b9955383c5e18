/**
 * The hostPath provisioner behind the `hostpath-provisioner` program: `HostPathProvisioner`, its
 * class parameters, RBAC rules, the XFS project-quota access its size enforcement uses and the
 * `DirectorySnapshot` resource.
 *
 * Stability: experimental. The stable interface of this package is its command-line program, flags,
 * class parameters and annotations; these library exports serve that program, the tests and the
 * chaos suite, and may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */

export type {
  DirectorySnapshot,
  SnapshotAccess,
  SnapshotDeletionPolicy,
  SnapshotError,
} from '@kube-provisioner/controller/snapshot';
export {
  annSnapshotProvisioner,
  directorySnapshots,
  reasonSnapshotFailed,
  reasonSnapshotReady,
  snapshotFinalizer,
  snapshotGroup,
  snapshotKind,
} from '@kube-provisioner/controller/snapshot';
export type {
  CapacityPublisherOptions,
  CapacitySource,
  NamedCapacitySource,
} from './capacity-publisher.ts';
export {
  CapacityPublisher,
  capacityObjectName,
  csiStorageCapacities,
  labelCapacityNode,
} from './capacity-publisher.ts';
export type { ClassParameters, DeletePolicy, InodeLimit, VolumeType } from './class-parameters.ts';
export { annVolumeType, defaultDirectoryMode, parseClassParameters } from './class-parameters.ts';
export type { HostPathProvisionerOptions } from './hostpath-provisioner.ts';
export { defaultProvisionerName, HostPathProvisioner } from './hostpath-provisioner.ts';
export type { NodeReader } from './node-placement.ts';
export type { NodeRootsEntry, NodeRootsSelection } from './node-roots-config.ts';
export { defaultNodeEntry, parseNodeRootsConfig, rootsOfNode } from './node-roots-config.ts';
export { reasonNodeRootsApplied, reasonNodeRootsRefused } from './node-roots-reload.ts';
export type { HostPathVolume, VolumeOwnerScope } from './owned-volumes.ts';
export { annOnDelete, annProvisionerIdentity, defaultNodeAffinityKey } from './persistent-volume.ts';
export type { ProvisionerMode } from './provisioner-mode.ts';
export type { QuotaFileSystemType, QuotaMount, QuotaMountCheck } from './quota-mount.ts';
export { checkQuotaMount } from './quota-mount.ts';
export type { QuotaMeasureOptions } from './quota-usage.ts';
export { quotaMeasure } from './quota-usage.ts';
export type { PolicyRule } from './rbac-rules.ts';
export { capacityRules, clusterRules, namespaceRules } from './rbac-rules.ts';
export type { RootCapacity, RootSpace, StatFs } from './root-capacity.ts';
export { noRoomReason, RootCapacityReader, roomFor } from './root-capacity.ts';
export type { NamedRoot, RootRoom } from './root-placement.ts';
export { chooseRoot, rootsOfClass } from './root-placement.ts';
export type {
  RootOfSet,
  RootSetChange,
  RootSetProvisionerOptions,
  RootSetVolume,
} from './root-set-provisioner.ts';
export { RootSetProvisioner } from './root-set-provisioner.ts';
export type { ProjectQuotaAccess } from './size-enforcement.ts';
export { annTakeBackFrom } from './take-back.ts';
export { version } from './version.ts';
export type { ProjectLimits, ProjectQuotas, ProjectUsage, RunXfsQuota } from './xfs-quota.ts';
export { xfsQuota } from './xfs-quota.ts';
