/**
 * What a claim and its class ask of a new volume directory, whatever fills it (nothing, data taken
 * back, or a clone): where it is, its owner, its modes and, where sizes are enforced, its limits.
 */
import { InfeasibleError, type ProvisionOptions } from '@kube-provisioner/controller';
import {
  type CreateVolumeOptions,
  type RelativeVolumePath,
  resolveVolumePath,
  type VolumeOwner,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ClassParameters } from './class-parameters.ts';
import { projectLimits } from './size-enforcement.ts';
import { quantityBytes } from './storage-quantity.ts';
import type { ProjectLimits } from './xfs-quota.ts';

/** The ownership record's owner of the claim's new volume. */
export function volumeOwner(
  { pvc, pvName }: Pick<ProvisionOptions, 'pvc' | 'pvName'>,
  provisioner: string,
  projectId: number | undefined,
): VolumeOwner {
  return {
    claimUid: pvc.metadata?.uid ?? '',
    namespace: pvc.metadata?.namespace ?? '',
    claimName: pvc.metadata?.name ?? '',
    pvName,
    provisioner,
    ...(projectId === undefined ? {} : { projectId }),
  };
}

/** How the directories of a volume of the class are made. */
export function directoryOptions(
  parameters: ClassParameters,
): Pick<CreateVolumeOptions, 'mode' | 'parentMode' | 'ownParentsOnly' | 'uid' | 'gid'> {
  return {
    mode: parameters.mode,
    // The class mode, but never writable by group or others: whoever can write a parent can swap
    // the volumes and records in it.
    parentMode: parameters.mode & ~0o022,
    // kubelet mounts hostPath volumes following links: a directory someone else made could have
    // the volume's path swapped for one.
    ownParentsOnly: true,
    uid: parameters.uid,
    gid: parameters.gid,
  };
}

/** The project limits of the claim's request under the class's graces. */
export function requestLimits(
  { pvc }: Pick<ProvisionOptions, 'pvc'>,
  parameters: ClassParameters,
): ProjectLimits {
  const request = pvc.spec?.resources?.requests?.storage;
  const bytes = quantityBytes(request);
  if (bytes === undefined)
    throw new InfeasibleError(`the requested size ${request} is not a number of bytes`);
  return projectLimits(bytes, parameters);
}

/**
 * The claim's volume directory below the root: the class's `pathPattern` rendered, or the PV name.
 *
 * @throws InfeasibleError when the render gives no usable directory.
 */
export function volumeDirectory(
  parameters: ClassParameters,
  pvc: Readonly<V1PersistentVolumeClaim>,
  pvName: string,
): RelativeVolumePath {
  const claim = {
    namespace: pvc.metadata?.namespace ?? '',
    name: pvc.metadata?.name ?? '',
    labels: pvc.metadata?.labels,
    annotations: pvc.metadata?.annotations,
  };
  const what = parameters.pathPattern === undefined ? 'PV name' : 'parameter "pathPattern"';
  try {
    // An empty fallback makes an empty render fail instead of silently using another name.
    return resolveVolumePath(parameters.pathPattern, { claim, pvName }, parameters.pathPattern ? '' : pvName);
  } catch (err) {
    throw new InfeasibleError(`${what} does not give a usable directory: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
