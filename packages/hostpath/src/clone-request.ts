/**
 * Cloning a claim on a hostpath root: the copy is made by the instance whose root holds the source
 * (in per-node mode, the source's node), into a new directory of the same root. The background
 * copy, its cap and the source's cloning-protection finalizer are the controller's `/clone`.
 */
import { type ClaimDataSource, InfeasibleError, type ProvisionOptions } from '@kube-provisioner/controller';
import type { CloneCopyOptions, CloneRequest } from '@kube-provisioner/controller/clone';
import {
  type CloneVolumeOptions,
  type RelativeVolumePath,
  relativePathUnder,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ClassParameters } from './class-parameters.ts';
import type { CopyLimit } from './copy-limit.ts';
import { volumeNode, volumePath } from './persistent-volume.ts';
import { directoryOptions, volumeOwner } from './volume-request.ts';

/** What a cloned volume needs besides the copy's own options: owner, modes, special files, its project. */
export type CloneVolumeSettings = Omit<CloneVolumeOptions, keyof CloneCopyOptions> & {
  /** For a class with `enforceSize`: the copy is refused once its project uses more (`copy-limit.ts`). */
  readonly limit?: CopyLimit | undefined;
};

/** What an enforced clone's volume gets besides an unenforced one's. */
export interface EnforcedCloneSettings extends CopyLimit {
  /** Makes the copy's temporary directory the top of the project, with the limit. */
  readonly beforeCopy: (directory: string) => Promise<void>;
}

/** Where this instance's volumes are: its root and, in per-node mode, its node. */
export interface CloneScope {
  readonly root: string;
  /** This node in per-node mode; `undefined` in shared mode, where one root serves every node. */
  readonly node: string | undefined;
  readonly provisionerName: string;
}

/**
 * The directory below `scope.root` of the source PV's volume.
 *
 * @throws InfeasibleError when the source is on another node or outside the root.
 */
export function sourcePathOf(pv: Readonly<V1PersistentVolume>, scope: CloneScope): RelativeVolumePath {
  const name = pv.metadata?.name ?? '';
  const sourceNode = volumeNode(pv);
  if (scope.node !== undefined && sourceNode !== scope.node) {
    throw new InfeasibleError(
      `the source volume ${name} is on node ${sourceNode ?? '(none recorded)'}, not ${scope.node}: a clone is copied on its source's node, so the new claim's pod must run on that node`,
    );
  }
  const path = volumePath(pv);
  try {
    if (path === undefined) throw new Error('it has neither a hostPath nor a local source');
    return relativePathUnder(scope.root, path);
  } catch (err) {
    throw new InfeasibleError(
      `the source volume ${name} is not a directory under ${scope.root}, the root of this provisioner: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * The clone of `options.dataSource` into volume `relative`; `enforced` for a class with
 * `enforceSize` (see `enforced-clone.ts`).
 */
export function cloneRequest(
  options: ProvisionOptions & { readonly dataSource: ClaimDataSource },
  relative: RelativeVolumePath,
  parameters: ClassParameters,
  scope: CloneScope,
  enforced?: EnforcedCloneSettings,
): CloneRequest<RelativeVolumePath, CloneVolumeSettings> {
  return {
    pvc: options.pvc,
    pvName: options.pvName,
    path: relative,
    dataSource: options.dataSource,
    volume: {
      ...directoryOptions(parameters),
      owner: volumeOwner(options, scope.provisionerName, enforced?.projectId),
      specialFiles: parameters.cloneSpecialFiles,
      beforeCopy: enforced?.beforeCopy,
      limit: enforced && { projectId: enforced.projectId, hardBytes: enforced.hardBytes },
    },
    pathOf: (pv) => sourcePathOf(pv, scope),
  };
}
