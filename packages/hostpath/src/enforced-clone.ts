/**
 * Clones into a class with `enforceSize`. The new volume is made and recorded with its project ID
 * first, as an enforced create makes it, so a retry after a crash finds the same ID. The temporary
 * directory the copy fills is made the top of that project, with the limit, before anything is
 * copied (safe-fs's `beforeCopy`): every copied file counts, and a source using more than the limit
 * stops the copy, by the kernel's refusal or by the provisioner's own check (`copy-limit.ts`). A
 * failed or cancelled copy's volume loses its limit before its directory goes.
 */
import { InfeasibleError, type OperationContext } from '@kube-provisioner/controller';
import type { CloneStep, CloneVolumes } from '@kube-provisioner/controller/clone';
import { isSafeFsError, type RelativeVolumePath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import type { CloneVolumeSettings, EnforcedCloneSettings } from './clone-request.ts';
import { copyDoesNotFit, copyWithinLimit } from './copy-limit.ts';
import type { SizeEnforcement } from './size-enforcement.ts';
import type { ProjectLimits } from './xfs-quota.ts';

// How long a failed copy's cleanup may wait for `xfs_quota`: the copy's own signal is aborted by then.
const cleanupTimeoutMs = 30_000;

/**
 * The volumes the clone jobs reach: `root`'s, where a copy with a limit is refused once above it
 * (`copy-limit.ts`), and removing a failed copy's volume first removes its project's limit, as
 * deleting a PV does.
 */
export function cloneVolumesOf(
  root: VolumeRoot,
  sizes: SizeEnforcement,
): CloneVolumes<RelativeVolumePath, CloneVolumeSettings> {
  return {
    cloneVolume(source, path, { limit, ...options }) {
      if (limit === undefined) return root.cloneVolume(source, path, options);
      const usage = (signal: AbortSignal) => sizes.projectBytes(limit.projectId, signal);
      const copy = { signal: options.signal, onProgress: options.onProgress };
      return copyWithinLimit(
        (own) => root.cloneVolume(source, path, { ...options, ...own }),
        limit,
        usage,
        copy,
      );
    },
    async deleteVolume(path, options) {
      const fence = { assertLeader: options.beforeEachWrite, signal: AbortSignal.timeout(cleanupTimeoutMs) };
      await sizes.removeLimit(path, options.pvName, fence);
      return root.deleteVolume(path, options);
    },
  };
}

/** One enforced clone: the new volume, its limits, and how an empty one is made with a project. */
export interface EnforcedCloneTarget {
  readonly root: VolumeRoot;
  readonly sizes: SizeEnforcement;
  readonly relative: RelativeVolumePath;
  readonly pvName: string;
  readonly claimUid: string;
  readonly limits: ProjectLimits;
  /** Makes the empty volume, recorded with project `id`, as an enforced create does. */
  readonly makeVolume: (id: number) => Promise<void>;
}

/**
 * Runs one step of an enforced clone: `step` with the project of the target's volume (made first if
 * it is not there yet).
 *
 * @throws InfeasibleError when the root cannot enforce sizes (before anything is made), or when the
 * source holds more than the limit (its copy is gone by then); the step's other errors.
 */
export async function stepEnforcedClone(
  target: EnforcedCloneTarget,
  context: OperationContext,
  step: (settings: EnforcedCloneSettings) => Promise<CloneStep>,
): Promise<CloneStep> {
  const { sizes, relative, limits } = target;
  const quotas = await sizes.quotas();
  const recorded = await sizes.recordedProjectId(relative, target.claimUid);
  const projectId =
    recorded ??
    (await sizes.withNewProjectId(quotas, context.signal, async (id) => {
      await target.makeVolume(id);
      return id;
    }));
  const beforeCopy = (path: string) =>
    sizes.limitDirectory({ relative, path, projectId }, quotas, limits, context);
  try {
    return await step({ projectId, hardBytes: limits.hardBytes, beforeCopy });
  } catch (err) {
    // A step that throws starts no copy: a volume made by this call, or one the source is refused
    // for, serves nothing. (A failed copy's volume is gone already, removed by the clone jobs.)
    if (recorded === undefined || err instanceof InfeasibleError) await removeVolume(target, context);
    throw explainFailure(target, err);
  }
}

/** Removes the target's volume and its project's limit. */
async function removeVolume(target: EnforcedCloneTarget, context: OperationContext): Promise<void> {
  await cloneVolumesOf(target.root, target.sizes).deleteVolume(target.relative, {
    pvName: target.pvName,
    recordedOnly: true,
    beforeEachWrite: () => context.assertLeader(),
  });
}

/** Why an enforced clone failed, for the claim's event. */
function explainFailure(target: EnforcedCloneTarget, err: unknown): unknown {
  // XFS says ENOSPC when a project's hard limit is reached, ext4 EDQUOT.
  if (isSafeFsError(err) && (err.errno === 'ENOSPC' || err.errno === 'EDQUOT')) {
    return copyDoesNotFit(target.limits.hardBytes, err);
  }
  return err;
}
