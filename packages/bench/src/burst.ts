/**
 * burst: N claims created at once, provisioned by the running hostpath provisioner.
 */
import { resources } from '@kube-provisioner/controller/client';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { forEachConcurrently } from './concurrency.ts';
import { numberedNames } from './fixtures.ts';
import { summarizeLatencies } from './percentiles.ts';
import { phaseDeadline, withProgress } from './phase.ts';
import type { ProvisionerProcess } from './provisioner-process.ts';
import type { BurstResult } from './report.ts';
import type { ClaimNamespace, RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

/** Requests in flight while creating or deleting claims: enough to keep the API server busy. */
export const claimRequestConcurrency = 32;

/** The burst's figures, its raw latencies (for the chart) and one provisioned PV (the ceiling's template). */
export interface BurstOutcome {
  readonly result: BurstResult;
  readonly latenciesMs: readonly number[];
  readonly template: V1PersistentVolume;
  readonly claimNames: readonly string[];
}

/** Creates `claims` claims in `space` and waits until all have PVs and are Bound. */
export async function runBurst(
  context: RunContext,
  space: ClaimNamespace,
  provisioner: ProvisionerProcess,
  claims: number,
): Promise<BurstOutcome> {
  const { api } = context.cluster;
  const { namespace, timeline } = space;
  const names = numberedNames('burst', claims);
  const deadline = phaseDeadline(claims);
  const cpuBefore = (await provisioner.sample()).cpuS;
  // Resets the provisioner's event-loop delay histogram, so the next read covers the burst alone.
  await provisioner.eventLoopDelayP99Ms();
  const firstCreate = performance.now();
  const creating = forEachConcurrently(names, claimRequestConcurrency, async (name) => {
    await api
      .resource(resources.persistentVolumeClaims)
      .create(context.claim(name, namespace), { namespace });
  });
  await withProgress(
    'burst: PVs',
    claims,
    () => timeline.counts.volumesAdded,
    Promise.all([creating, timeline.until((counts) => counts.volumesAdded >= claims, deadline)]),
  );
  const { cpuS, peakRssMb } = await provisioner.sample();
  const eventLoopDelayP99Ms = await provisioner.eventLoopDelayP99Ms();
  await withProgress(
    'burst: Bound',
    claims,
    () => timeline.counts.claimsBound,
    timeline.until((counts) => counts.claimsBound >= claims, deadline),
  );
  const secondsToAllPv = seconds((timeline.lastVolumeAdded ?? firstCreate) - firstCreate);
  const latenciesMs = timeline.latencies();
  const claim = await api.resource(resources.persistentVolumeClaims).get(names[0] as string, { namespace });
  const template = await api.resource(resources.persistentVolumes).get(claim.spec?.volumeName ?? '');
  return {
    result: {
      claims,
      seconds_to_all_pv: secondsToAllPv,
      seconds_to_all_bound: seconds((timeline.lastBound ?? firstCreate) - firstCreate),
      seconds_to_all_annotated: seconds((timeline.lastAnnotated ?? firstCreate) - firstCreate),
      claims_per_s: round(claims / secondsToAllPv),
      latency_ms: summarizeLatencies(latenciesMs),
      annotated_to_pv_ms: summarizeLatencies(timeline.latencies('annotated')),
      peak_rss_mb: round(peakRssMb),
      cpu_s: round(cpuS - cpuBefore),
      ...(eventLoopDelayP99Ms === undefined ? {} : { event_loop_delay_p99_ms: round(eventLoopDelayP99Ms) }),
    },
    latenciesMs,
    template,
    claimNames: names,
  };
}
