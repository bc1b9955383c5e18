/**
 * The PersistentVolume a hostpath provisioner returns, and the facts read back from it on delete.
 */
import { type ProvisionOptions, persistentVolumeFor } from '@kube-provisioner/controller';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { DeletePolicy, VolumeType } from './class-parameters.ts';

/**
 * PV annotation naming the node that holds the data. The Go example writes the same key, so its
 * volumes are deleted by this provisioner's instance on that node. It is the only input for routing
 * a delete: the node-affinity value may be a label that differs from the node name.
 */
export const annProvisionerIdentity = 'hostPathProvisionerIdentity';

/**
 * PV annotation holding the class's `onDelete` at provision time, so editing or deleting the class
 * later cannot change the fate of existing data. The NFS provisioners record theirs the same way.
 */
export const annOnDelete = 'hostpath.kube-provisioner.io/on-delete';

/** Node label that node affinity uses unless configured otherwise. */
export const defaultNodeAffinityKey = 'kubernetes.io/hostname';

/** Everything {@link buildPersistentVolume} needs beyond the claim and class. */
export interface VolumeShape extends Pick<ProvisionOptions, 'pvName' | 'pvc' | 'storageClass'> {
  /** Absolute directory on the node. */
  readonly path: string;
  readonly volumeType: VolumeType;
  readonly onDelete: DeletePolicy;
  /** Node holding the data, recorded in {@link annProvisionerIdentity}; `undefined` in shared mode without a node. */
  readonly nodeName: string | undefined;
  /** Required node affinity; `undefined` for shared roots. */
  readonly nodeAffinity: { readonly key: string; readonly value: string } | undefined;
}

/**
 * Builds the PV. `hostPath` volumes use type `Directory`: the provisioner created the directory, so
 * if it vanishes the mount must fail rather than silently start from an empty one.
 */
export function buildPersistentVolume(shape: VolumeShape): V1PersistentVolume {
  const { nodeAffinity } = shape;
  return persistentVolumeFor(
    shape,
    {
      ...(shape.volumeType === 'local'
        ? { local: { path: shape.path } }
        : { hostPath: { path: shape.path, type: 'Directory' } }),
      ...(nodeAffinity === undefined
        ? {}
        : {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: nodeAffinity.key, operator: 'In', values: [nodeAffinity.value] },
                    ],
                  },
                ],
              },
            },
          }),
    },
    {
      [annOnDelete]: shape.onDelete,
      ...(shape.nodeName === undefined ? {} : { [annProvisionerIdentity]: shape.nodeName }),
    },
  );
}

/** The directory a PV points at (`hostPath` or `local`), or `undefined` for any other source. */
export function volumePath(pv: Readonly<V1PersistentVolume>): string | undefined {
  return pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
}

/** The node recorded at provision time, or `undefined` when the PV carries none. */
export function volumeNode(pv: Readonly<V1PersistentVolume>): string | undefined {
  const node = pv.metadata?.annotations?.[annProvisionerIdentity];
  return node === undefined || node === '' ? undefined : node;
}

/**
 * What deleting `pv` does with its directory: a PV made before the policy existed records none and
 * is deleted as it always was; a value edited to anything unknown keeps the data, the safe side.
 */
export function recordedDeletePolicy(pv: Readonly<V1PersistentVolume>): DeletePolicy {
  const recorded = pv.metadata?.annotations?.[annOnDelete];
  return recorded === undefined || recorded === 'delete' ? 'delete' : 'retain';
}
