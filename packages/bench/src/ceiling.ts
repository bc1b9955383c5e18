/**
 * ceiling: the API server's own limit for the provisioner's essential work. A bare, unthrottled
 * client creates as many PVs of the provisioned shape as the burst had claims, with as many in
 * flight as the provisioner has claim workers, and does nothing else.
 */
import { resources } from '@kube-provisioner/controller';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { forEachConcurrently } from './concurrency.ts';
import { ceilingVolume, numberedNames, runLabel } from './fixtures.ts';
import { withProgress } from './phase.ts';
import type { CeilingResult } from './report.ts';
import type { RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

/** ProvisionController's default claim workers (`threadiness`); the CLI keeps the default. */
export const provisionerWorkers = 4;

/** Creates `count` PVs like `template`, then deletes them again. */
export async function runCeiling(
  context: RunContext,
  template: V1PersistentVolume,
  count: number,
  burstClaimsPerS: number,
): Promise<CeilingResult> {
  const volumes = context.cluster.api.resource(resources.persistentVolumes);
  const names = numberedNames(`ceiling-${context.runId}`, count);
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
  const elapsed = seconds(performance.now() - started);
  await context.cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .deleteCollectionPersistentVolume({ labelSelector: `${runLabel}=${context.runId}` });
  const perSecond = round(count / elapsed);
  return {
    pvs: count,
    concurrency: provisionerWorkers,
    seconds: elapsed,
    ceiling_pv_per_s: perSecond,
    ratio_to_ceiling: round(burstClaimsPerS / perSecond),
  };
}
