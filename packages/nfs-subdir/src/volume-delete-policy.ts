/**
 * Which policy Delete applies to a PV: the one recorded at provision time, or, for PVs of the
 * upstream programs (which record none), the one upstream would read from the live StorageClass.
 */
import type { OperationContext } from '@kube-provisioner/controller';
import { isNotFound, type ResourceClient } from '@kube-provisioner/controller/client';
import { annBetaStorageClass } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { legacyDeletePolicy, type NfsDialect } from './class-parameters.ts';
import { annOnDelete, type DeletePolicy, recordedDeletePolicy } from './delete-policy.ts';

/** Reads StorageClasses (`storageclasses` `get`); a `ResourceClient<V1StorageClass>` fits. */
export type StorageClassReader = Pick<ResourceClient<V1StorageClass>, 'get'>;

/** A policy and where it came from: `recorded` on the PV, or read from the live class (`legacy`). */
export interface VolumeDeletePolicy {
  readonly policy: DeletePolicy;
  readonly source: 'recorded' | 'legacy';
}

/**
 * The policy for `pv`. An edited, unknown recorded policy archives; an upstream PV whose class is
 * gone fails with the remedy, touching nothing.
 */
export async function volumeDeletePolicy(
  pv: Readonly<V1PersistentVolume>,
  dialect: NfsDialect,
  classes: StorageClassReader,
  context: OperationContext,
): Promise<VolumeDeletePolicy> {
  const recorded = recordedDeletePolicy(pv);
  if (recorded === 'invalid') {
    context.logger.warn({ policy: 'archive' }, 'unknown recorded delete policy; archiving to keep the data');
    return { policy: 'archive', source: 'recorded' };
  }
  if (recorded !== undefined) return { policy: recorded, source: 'recorded' };
  const className = storageClassOf(pv);
  if (className === '') {
    throw new Error(
      `the volume records no delete policy and names no StorageClass to read one from; annotate it with ${annOnDelete}`,
    );
  }
  let storageClass: V1StorageClass;
  try {
    storageClass = await classes.get(className, { signal: context.signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw new Error(
      `the volume records no delete policy (made by an upstream provisioner) and its StorageClass ${JSON.stringify(className)} no longer exists; re-create the class or annotate the volume with the policy to apply`,
      { cause: err },
    );
  }
  const { policy, problem } = legacyDeletePolicy(dialect, storageClass.parameters);
  if (problem !== undefined) {
    context.logger.warn({ StorageClass: className, policy }, `${problem}; archiving to keep the data`);
  }
  return { policy, source: 'legacy' };
}

/** The class a PV names: the beta annotation, as nfs-client read it, else `spec.storageClassName`. */
function storageClassOf(pv: Readonly<V1PersistentVolume>): string {
  return pv.metadata?.annotations?.[annBetaStorageClass] || pv.spec?.storageClassName || '';
}
