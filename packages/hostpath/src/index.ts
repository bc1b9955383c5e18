/** Version of this package, read from its manifest. */

export type { ClassParameters, VolumeType } from './class-parameters.ts';
export { annVolumeType, defaultDirectoryMode, parseClassParameters } from './class-parameters.ts';
export type { HostPathProvisionerOptions, NodeReader, ProvisionerMode } from './hostpath-provisioner.ts';
export { defaultProvisionerName, HostPathProvisioner } from './hostpath-provisioner.ts';
export { annProvisionerIdentity, defaultNodeAffinityKey } from './persistent-volume.ts';
export type { PolicyRule } from './rbac-rules.ts';
export { clusterRules, namespaceRules } from './rbac-rules.ts';
export { version } from './version.ts';
