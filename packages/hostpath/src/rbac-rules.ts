/**
 * The API permissions the hostpath provisioner uses, as one table. The manifests in `deploy/` are
 * checked against it, so RBAC cannot drift from the code (upstream shipped roles that never let the
 * example become leader).
 */
import {
  cloneAndExpandClusterRules,
  leaderElectionRules,
  type PolicyRule,
} from '@kube-provisioner/controller/cli';
import { snapshotRules } from '@kube-provisioner/controller/snapshot';

export type { PolicyRule } from '@kube-provisioner/controller/cli';

/**
 * Cluster-wide rules: the controller's, plus Nodes, read in per-node mode to resolve the node-affinity
 * label and to tell a vanished node from a live peer. Claims are patched for the cloning-protection
 * finalizer on a clone's source claim (no reschedule); their status is patched by volume expansion.
 * Then the snapshots' rules (shared mode), the controller's `snapshotRules`.
 */
export const clusterRules: readonly PolicyRule[] = [
  ...cloneAndExpandClusterRules,
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
  ...snapshotRules,
];

/** Rules in the provisioner's own namespace: the leader-election Lease (shared mode). */
export const namespaceRules: readonly PolicyRule[] = leaderElectionRules;

/**
 * Rules in the provisioner's own namespace for capacity publishing (per-node mode,
 * `capacity-publisher.ts`): its node's `CSIStorageCapacity` objects listed, created, updated and deleted.
 */
export const capacityRules: readonly PolicyRule[] = [
  {
    apiGroups: ['storage.k8s.io'],
    resources: ['csistoragecapacities'],
    verbs: ['list', 'create', 'update', 'delete'],
  },
];
