/**
 * The supplemental GID of a volume in a class with `gidMin`/`gidMax`: taken from the controller's
 * `GidAllocator` and made the group of the volume directory, with the setgid bit so what pods create
 * there takes that group too.
 */
import { InfeasibleError, type OperationContext, type ProvisionOptions } from '@kube-provisioner/controller';
import type { GidAllocator } from '@kube-provisioner/controller/gid-allocator';
import type { ClassParameters } from './class-parameters.ts';

const setgid = 0o2000;

/** The volume directory's mode: `mode`, plus setgid when the volume has a GID. */
export function volumeModeWithGid(mode: number, gid: number | undefined): number {
  return gid === undefined ? mode : mode | setgid;
}

/**
 * The volume's GID from the class's `gidMin`/`gidMax`, or `undefined` when the class sets neither.
 * Take it before making the directory: a retried provision gets the same one.
 *
 * @throws InfeasibleError when the class asks for a GID and `gids` is absent.
 */
export async function allocateVolumeGid(
  gids: GidAllocator | undefined,
  { pvName, pvc, storageClass }: ProvisionOptions,
  parameters: ClassParameters,
  context: OperationContext,
): Promise<number | undefined> {
  if (parameters.gidRange === undefined) return undefined;
  if (gids === undefined) {
    throw new InfeasibleError(
      'StorageClass parameters gidMin/gidMax need GID allocation, which this provisioner was started without (it reads the existing PVs)',
    );
  }
  return await gids.allocateNext({ pvName, pvc, storageClass }, context.signal);
}
