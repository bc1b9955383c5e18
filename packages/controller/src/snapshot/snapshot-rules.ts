/**
 * The API permissions taking and restoring `DirectorySnapshot`s need, for a provisioner's RBAC table:
 * listed and watched by the leader (`snapshot-watch.ts`), read by restores, patched for the
 * provisioner's annotation and finalizers (its own and the cloning-protection one of a restore),
 * their status written when taken or failed, and deleted when their class's bounds expire them.
 */
import type { PolicyRule } from '../cli/rbac.ts';
import { directorySnapshots } from './directory-snapshot.ts';

/** Cluster-wide rules on `directorysnapshots`: exactly what the taker and the restores call. */
export const snapshotRules: readonly PolicyRule[] = [
  {
    apiGroups: [directorySnapshots.group],
    resources: [directorySnapshots.plural],
    verbs: ['get', 'list', 'watch', 'patch', 'delete'],
  },
  {
    apiGroups: [directorySnapshots.group],
    resources: [`${directorySnapshots.plural}/status`],
    verbs: ['patch'],
  },
];
