/**
 * What the snapshot machinery reads and writes on the API server, and where it reports: shared by
 * the taker and its sweep of the class bounds.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { ResourceClient } from '../client/resource-client.ts';
import type { EventRecorder } from '../events/event-recorder.ts';
import type { DirectorySnapshot } from './directory-snapshot.ts';

/** What taking and restoring snapshots read and write on the API server, and where they report. */
export interface SnapshotAccess {
  /** `directorysnapshots` `get` (restores), `list`, `watch`, `patch`, `delete` (the bounds); `directorysnapshots/status` `patch`. */
  readonly snapshots: ResourceClient<DirectorySnapshot>;
  /** `persistentvolumeclaims` `get`. */
  readonly claims: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get'>;
  /** `persistentvolumes` `get`. */
  readonly volumes: Pick<ResourceClient<V1PersistentVolume>, 'get'>;
  /**
   * `storageclasses` `get`: the source claim's class bounds its snapshots (`snapshotsPerClaim`,
   * `snapshotRetention`). Without it no snapshot is deleted by a bound.
   */
  readonly classes?: Pick<ResourceClient<V1StorageClass>, 'get'> | undefined;
  /** Where the snapshots' events (`SnapshotReady`, `SnapshotCreationFailed`, `SnapshotExpired`) go; a controller `EventRecorder` fits. */
  readonly events?: Pick<EventRecorder, 'event'> | undefined;
  /** Where the `kube_provisioner_snapshot_*` metrics are registered. */
  readonly registry?: Registry | undefined;
}
