/**
 * The API permissions the NFS provisioners use, as one table for manifests and RBAC checks to
 * follow (R13). No `nodes` (NFS volumes are not node-bound) and no claim writes (no reschedule).
 */

/** One RBAC policy rule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/** Cluster-wide rules. StorageClasses are also read directly to delete PVs of the upstream programs. */
export const clusterRules: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['persistentvolumes'],
    verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
  },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];

/** Rules in the provisioner's own namespace: the leader-election Lease. */
export const namespaceRules: readonly PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];
