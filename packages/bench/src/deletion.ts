/**
 * delete: the burst's claims deleted at once; the provisioner removes their directories and PVs.
 */
import { readdir } from 'node:fs/promises';
import { resources } from '@kube-provisioner/controller/client';
import { claimRequestConcurrency } from './burst.ts';
import { forEachConcurrently } from './concurrency.ts';
import { phaseDeadline, withProgress } from './phase.ts';
import type { ProvisionerProcess } from './provisioner-process.ts';
import type { DeleteResult } from './report.ts';
import type { ClaimNamespace, RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

const directoryPollMs = 50;

/** Volume directories left under `root`: the default pathPattern names them after their PVs. */
async function volumeDirectories(root: string): Promise<number> {
  const entries = await readdir(root, { withFileTypes: true });
  return entries.filter((entry) => entry.isDirectory() && entry.name.startsWith('pvc-')).length;
}

/** Deletes `claimNames` in `space` and waits until their PVs and directories are gone. */
export async function runDelete(
  context: RunContext,
  space: ClaimNamespace,
  provisioner: ProvisionerProcess,
  claimNames: readonly string[],
): Promise<DeleteResult> {
  const claims = claimNames.length;
  const { namespace, timeline, root } = space;
  const deadline = phaseDeadline(claims);
  const deletedBefore = timeline.counts.volumesDeleted;
  const cpuBefore = (await provisioner.sample()).cpuS;
  const firstDelete = performance.now();
  const deleting = forEachConcurrently(claimNames, claimRequestConcurrency, async (name) => {
    await context.cluster.api.resource(resources.persistentVolumeClaims).delete(name, { namespace });
  });
  await withProgress(
    'delete: PVs gone',
    claims,
    () => timeline.counts.volumesDeleted - deletedBefore,
    Promise.all([
      deleting,
      timeline.until((counts) => counts.volumesDeleted - deletedBefore >= claims, deadline),
    ]),
  );
  let remaining = await volumeDirectories(root);
  while (remaining > 0) {
    deadline.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, directoryPollMs));
    remaining = await volumeDirectories(root);
  }
  const dirsGone = performance.now();
  const { cpuS } = await provisioner.sample();
  const secondsToDirs = seconds(dirsGone - firstDelete);
  return {
    claims,
    seconds_to_all_pv_deleted: seconds((timeline.lastVolumeDeleted ?? firstDelete) - firstDelete),
    seconds_to_all_dirs_deleted: secondsToDirs,
    claims_per_s: round(claims / secondsToDirs),
    cpu_s: round(cpuS - cpuBefore),
  };
}
