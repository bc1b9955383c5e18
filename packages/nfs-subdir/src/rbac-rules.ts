/**
 * The API permissions the NFS provisioners use, as one table for manifests and RBAC checks to
 * follow: the controller's own, claims `patch` for the cloning-protection finalizer on a clone's
 * source claim, and claims' `status` `patch` for volume expansion. No `nodes` (NFS volumes are not node-bound) and no other claim writes (no reschedule).
 */
import {
  controllerClusterRules,
  leaderElectionRules,
  type PolicyRule,
  volumeExpansionRules,
} from '@kube-provisioner/controller/cli';

export type { PolicyRule } from '@kube-provisioner/controller/cli';

/** Cluster-wide rules. StorageClasses are also read directly to delete PVs of the upstream programs. */
export const clusterRules: readonly PolicyRule[] = [
  ...controllerClusterRules.map((rule) =>
    rule.resources.includes('persistentvolumeclaims') ? { ...rule, verbs: [...rule.verbs, 'patch'] } : rule,
  ),
  ...volumeExpansionRules,
];

/** Rules in the provisioner's own namespace: the leader-election Lease. */
export const namespaceRules: readonly PolicyRule[] = leaderElectionRules;
