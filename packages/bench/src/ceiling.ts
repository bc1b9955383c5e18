/**
 * ceiling: the API server's own limit for the provisioner's essential work. A bare, unthrottled
 * client creates as many PVs of the provisioned shape as the burst had claims, with as many in
 * flight as the provisioner has claim workers, and does nothing else.
 */
import { resources } from '@kube-provisioner/controller/client';
import { waitFor } from '@kube-provisioner/testenv';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { forEachConcurrently } from './concurrency.ts';
import { ceilingLabel, ceilingVolume, numberedNames } from './fixtures.ts';
import { phaseTimeoutMs, withProgress } from './phase.ts';
import type { CeilingResult } from './report.ts';
import type { RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

/** ProvisionController's default claim workers (`threadiness`), the Go library's and ours. */
export const provisionerWorkers = 4;

/**
 * Creates `count` PVs like `template` named `<prefix>-<i>` with our client stack (the bench's
 * unthrottled KubeApi), `provisionerWorkers` at a time, and resolves with the seconds the creates
 * took. One read first opens the connection, so set-up is not timed (the Go client does the same).
 */
export async function createVolumesWithOurClient(
  context: RunContext,
  template: V1PersistentVolume,
  prefix: string,
  count: number,
): Promise<number> {
  const volumes = context.cluster.api.resource(resources.persistentVolumes);
  await volumes.list({ limit: 1 });
  const names = numberedNames(prefix, count);
  let created = 0;
  const started = performance.now();
  await withProgress(
    'ceiling: PVs',
    count,
    () => created,
    forEachConcurrently(names, provisionerWorkers, async (name) => {
      await volumes.create(ceilingVolume(template, name, context.runId));
      created++;
    }),
  );
  return seconds(performance.now() - started);
}

/**
 * Deletes every PV of the run's ceilings (they carry the ceiling label and no claim) and resolves
 * once the API server has none left, so the next provisioner started does not list and cache a
 * thousand PVs on their way out (that made its start-up and idle RSS depend on which implementation
 * went first). `count` is how many there are, for the deadline.
 */
export async function deleteCeilingVolumes(context: RunContext, count: number): Promise<void> {
  const labelSelector = `${ceilingLabel}=${context.runId}`;
  await context.cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .deleteCollectionPersistentVolume({ labelSelector });
  const volumes = context.cluster.api.resource(resources.persistentVolumes);
  await waitFor(async () => (await volumes.list({ labelSelector, limit: 1 })).items.length === 0, {
    timeoutMs: phaseTimeoutMs(count),
    intervalMs: 250,
    description: `the ceiling's PVs (${labelSelector}) to be deleted`,
  });
}

/** Creates `count` PVs like `template`, then deletes them again. */
export async function runCeiling(
  context: RunContext,
  template: V1PersistentVolume,
  count: number,
  burstClaimsPerS: number,
): Promise<CeilingResult> {
  const elapsed = await createVolumesWithOurClient(context, template, `ceiling-${context.runId}`, count);
  await deleteCeilingVolumes(context, count);
  const perSecond = round(count / elapsed);
  return {
    pvs: count,
    concurrency: provisionerWorkers,
    seconds: elapsed,
    ceiling_pv_per_s: perSecond,
    ratio_to_ceiling: round(burstClaimsPerS / perSecond),
  };
}
