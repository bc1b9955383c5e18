/**
 * The API permissions the NFS provisioners use, as one table for manifests and RBAC checks to
 * follow: exactly the controller's own. No `nodes` (NFS volumes are not node-bound) and no
 * claim writes (no reschedule).
 */
import {
  controllerClusterRules,
  leaderElectionRules,
  type PolicyRule,
} from '@kube-provisioner/controller/cli';

export type { PolicyRule } from '@kube-provisioner/controller/cli';

/** Cluster-wide rules. StorageClasses are also read directly to delete PVs of the upstream programs. */
export const clusterRules: readonly PolicyRule[] = controllerClusterRules;

/** Rules in the provisioner's own namespace: the leader-election Lease. */
export const namespaceRules: readonly PolicyRule[] = leaderElectionRules;
