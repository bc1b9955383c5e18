/**
 * The API permissions the hostpath provisioner uses, as one table. The manifests in `deploy/` are
 * checked against it, so RBAC cannot drift from the code (upstream shipped roles that never let the
 * example become leader).
 */

/** One RBAC policy rule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * Cluster-wide rules. Nodes are read in per-node mode to resolve the node-affinity label and to tell
 * a vanished node from a live peer. PVCs are only read: the provisioner never asks for a reschedule.
 */
export const clusterRules: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['persistentvolumes'],
    verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
  },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
];

/** Rules in the provisioner's own namespace: the leader-election Lease (shared mode). */
export const namespaceRules: readonly PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];
