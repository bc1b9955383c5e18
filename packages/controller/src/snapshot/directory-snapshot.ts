/**
 * The `DirectorySnapshot` custom resource (`snapshot.kube-provisioner.io/v1alpha1`): a point-in-time
 * copy of a claim's directory, kept on the provisioner's root, from which new claims are restored
 * (`dataSourceRef`). Its fields follow `VolumeSnapshot`'s; the CRD ships with each provisioner (hostpath's `deploy/snapshot-crd.yaml`).
 */

import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { ResourceDescriptor } from '../client/resource-client.ts';
import type { DataSourceKind } from '../provisioner.ts';

/** API group of the snapshot kind. */
export const snapshotGroup = 'snapshot.kube-provisioner.io';

/** What happens to a snapshot's data when its object is deleted; `Delete` when unset. */
export type SnapshotDeletionPolicy = 'Delete' | 'Retain';

/** A snapshot's failure, as `VolumeSnapshot`'s `status.error`. */
export interface SnapshotError {
  readonly message: string;
  /** RFC 3339. */
  readonly time: string;
}

/** The `DirectorySnapshot` object. */
export interface DirectorySnapshot {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: {
    /** The claim to snapshot, in the snapshot's namespace. */
    readonly source?: { readonly persistentVolumeClaimName?: string };
    readonly deletionPolicy?: SnapshotDeletionPolicy;
  };
  status?: {
    readonly readyToUse?: boolean;
    /** The source PV's capacity: the least a restoring claim must request. */
    readonly restoreSize?: string;
    /** RFC 3339: when the copy was complete. */
    readonly creationTime?: string;
    readonly error?: SnapshotError | null;
  };
}

/** The snapshot kind, as a claim's `dataSourceRef` names it. */
export const snapshotKind: DataSourceKind = { apiGroup: snapshotGroup, kind: 'DirectorySnapshot' };

/** The resource, for the controller's clients. */
export const directorySnapshots: ResourceDescriptor<DirectorySnapshot> = {
  group: snapshotGroup,
  version: 'v1alpha1',
  plural: 'directorysnapshots',
  kind: 'DirectorySnapshot',
  namespaced: true,
  model: 'DirectorySnapshot',
};

/** On every snapshot this provisioner took: its data goes (or is kept, `Retain`) before the object does. */
export const snapshotFinalizer = 'snapshot.kube-provisioner.io/data';

/** Annotation naming the provisioner that took a snapshot: only it restores and deletes its data. */
export const annSnapshotProvisioner = 'snapshot.kube-provisioner.io/provisioner';

/**
 * The name a snapshot's ownership record gives in place of a PV name: `snapshot-<uid>`, which tells
 * snapshots from volumes in the records. (A PV's delete never reaches a snapshot anyway: its stored
 * path cannot name the snapshot area.)
 */
export function snapshotRecordName(uid: string): string {
  return `snapshot-${uid}`;
}

/** The snapshot's deletion policy; anything but `Retain` deletes. */
export function deletionPolicyOf(snapshot: Readonly<DirectorySnapshot>): SnapshotDeletionPolicy {
  return snapshot.spec?.deletionPolicy === 'Retain' ? 'Retain' : 'Delete';
}
