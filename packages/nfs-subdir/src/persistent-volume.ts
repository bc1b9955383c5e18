/**
 * The PersistentVolume both NFS dialects return: upstream's shape (`nfs: {server, path, readOnly:
 * false}`, the claim's request and access modes, the class's reclaim policy and mount options) plus
 * the delete policy recorded in {@link annOnDelete}, and the volume's supplemental GID when its class
 * allocates one.
 */
import { type ProvisionOptions, persistentVolumeFor } from '@kube-provisioner/controller';
import { annVolumeGid } from '@kube-provisioner/controller/gid-allocator';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { annArchiveRetention, annOnDelete, type DeletePolicy } from './delete-policy.ts';

/** Everything {@link buildPersistentVolume} needs. */
export interface NfsVolumeShape extends Pick<ProvisionOptions, 'pvName' | 'pvc' | 'storageClass'> {
  readonly server: string;
  /** Absolute path on the server. */
  readonly path: string;
  readonly onDelete: DeletePolicy;
  /** The class's `archiveRetention`, recorded when the policy archives. */
  readonly archiveRetention?: string | undefined;
  /** The group of the volume directory, recorded in {@link annVolumeGid} for kubelet. */
  readonly gid?: number | undefined;
}

/** Builds the PV template handed to the controller. */
export function buildPersistentVolume(shape: NfsVolumeShape): V1PersistentVolume {
  return persistentVolumeFor(
    shape,
    { nfs: { server: shape.server, path: shape.path, readOnly: false } },
    {
      [annOnDelete]: shape.onDelete,
      ...(shape.onDelete === 'archive' && shape.archiveRetention !== undefined
        ? { [annArchiveRetention]: shape.archiveRetention }
        : {}),
      ...(shape.gid === undefined ? {} : { [annVolumeGid]: String(shape.gid) }),
    },
  );
}
