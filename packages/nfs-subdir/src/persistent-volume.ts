/**
 * The PersistentVolume both NFS dialects return: upstream's shape (`nfs: {server, path, readOnly:
 * false}`, the claim's request and access modes, the class's reclaim policy and mount options) plus
 * the delete policy recorded in {@link annOnDelete}.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { annOnDelete, type DeletePolicy } from './delete-policy.ts';

/** Everything {@link buildPersistentVolume} needs. */
export interface NfsVolumeShape {
  readonly pvName: string;
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  readonly storageClass: Readonly<V1StorageClass>;
  readonly server: string;
  /** Absolute path on the server. */
  readonly path: string;
  readonly onDelete: DeletePolicy;
}

/** Builds the PV template handed to the controller. */
export function buildPersistentVolume(shape: NfsVolumeShape): V1PersistentVolume {
  const { pvc, storageClass } = shape;
  const storage = pvc.spec?.resources?.requests?.storage;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: shape.pvName, annotations: { [annOnDelete]: shape.onDelete } },
    spec: {
      capacity: storage === undefined ? {} : { storage },
      accessModes: [...(pvc.spec?.accessModes ?? [])],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      volumeMode: 'Filesystem',
      ...(storageClass.mountOptions?.length ? { mountOptions: [...storageClass.mountOptions] } : {}),
      nfs: { server: shape.server, path: shape.path, readOnly: false },
    },
  };
}
