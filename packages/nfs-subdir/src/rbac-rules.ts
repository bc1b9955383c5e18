/**
 * The API permissions the NFS provisioners use, as one table for manifests and RBAC checks to
 * follow: the controller's rules for a provisioner that clones and expands (claims `patch` for the
 * cloning-protection finalizer on a clone's source claim, claims' `status` `patch` for volume
 * expansion). No `nodes` (NFS volumes are not node-bound) and no other claim writes (no reschedule).
 */
import {
  cloneAndExpandClusterRules,
  leaderElectionRules,
  type PolicyRule,
} from '@kube-provisioner/controller/cli';
import { snapshotRules } from '@kube-provisioner/controller/snapshot';

export type { PolicyRule } from '@kube-provisioner/controller/cli';

/**
 * Cluster-wide rules. StorageClasses are also read directly to delete PVs of the upstream programs.
 * Then the snapshots' rules, the controller's `snapshotRules`: `DirectorySnapshot`s taken, restored
 * and deleted.
 */
export const clusterRules: readonly PolicyRule[] = [...cloneAndExpandClusterRules, ...snapshotRules];

/** Rules in the provisioner's own namespace: the leader-election Lease. */
export const namespaceRules: readonly PolicyRule[] = leaderElectionRules;
