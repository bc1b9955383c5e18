/**
 * compare: the Go library v13 (its hostpath example's shape, `bench-go provisioner`), ours and, when
 * asked, our library alone (the custom-provisioner example, which does what the Go example does) in
 * the same run, at the same client QPS/burst and workers, rounds rotating which goes first so drift
 * of the shared machine hits each. Per implementation and round: start-up and idle RSS, a burst
 * (claims created while it runs) with its deletion, a backlog (claims annotated before it starts),
 * and its bare client's PV creates (client-go, or our client stack, measured once for both of ours),
 * each in a process of its own, beside `node:http2` alone, the runtime's floor per request.
 */
import { resources } from '@kube-provisioner/controller/client';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { type RequestCounts, requestsBetween } from './api-requests.ts';
import { type BareClient, createVolumesWithBareClient } from './bare-client-process.ts';
import { claimRequestConcurrency, runBurst } from './burst.ts';
import { deleteCeilingVolumes, provisionerWorkers } from './ceiling.ts';
import type { LatencyPoint } from './claim-timeline.ts';
import { forEachConcurrently } from './concurrency.ts';
import { runDelete } from './deletion.ts';
import { ceilingVolume, numberedNames } from './fixtures.ts';
import type { OursProgram } from './ours-program.ts';
import { phaseDeadline, withProgress } from './phase.ts';
import { type Implementation, startProvisioner } from './provisioner-process.ts';
import type {
  BacklogResult,
  BareClientRound,
  BurstResult,
  CompareResult,
  ImplementationRound,
  LibraryRound,
} from './report.ts';
import type { ClaimNamespace, RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

/** Options of {@link runCompare}. */
export interface CompareOptions {
  readonly claims: number;
  readonly rounds: number;
  /** Client QPS and burst given to all. */
  readonly qps: number;
  readonly burst: number;
  /** The `bench-go` executable. */
  readonly goBinary: string;
  /** Ours, as {@link prepareOurs} built it. */
  readonly ours: OursProgram;
  /** Our library alone (the custom-provisioner example), as {@link prepareOurs} built it; not run when absent. */
  readonly library?: OursProgram | undefined;
  /** Extra CLI and Node.js flags of ours and the library example. */
  readonly provisionerArgs: readonly string[];
  readonly nodeFlags: readonly string[];
  /** Also run the Go reference at client-go's defaults, as the example ships. */
  readonly goDefaults: boolean;
  readonly log: (message: string) => void;
}

type Name = Implementation['name'];
/** A round's figures before the bare clients run. */
type RoundBeforeCeiling = Omit<ImplementationRound, 'ceiling_pv_per_s' | 'ceiling_cpu_ms_per_pv'>;

/** Per implementation, the annotated → PV latency of each claim of the first round's burst. */
export interface CompareOutcome {
  readonly result: CompareResult;
  readonly latencyPoints: Readonly<Partial<Record<Name, readonly LatencyPoint[]>>>;
}

/** The implementations, the first going first in round `index`, each in turn (two alternate). */
export function roundOrder<T>(implementations: readonly T[], index: number): T[] {
  const shift = index % implementations.length;
  return [...implementations.slice(shift), ...implementations.slice(0, shift)];
}

/** Runs the rounds; see the module comment. */
export async function runCompare(context: RunContext, options: CompareOptions): Promise<CompareOutcome> {
  const go: Implementation = { name: 'go', binary: options.goBinary };
  const implementations: Implementation[] = [
    go,
    { name: 'ours', program: options.ours },
    ...(options.library === undefined ? [] : [{ name: 'library', program: options.library } as const]),
  ];
  const rounds: {
    go: ImplementationRound[];
    ours: ImplementationRound[];
    library: LibraryRound[];
    nodeHttp2: BareClientRound[];
  } = { go: [], ours: [], library: [], nodeHttp2: [] };
  const points: Partial<Record<Name, LatencyPoint[]>> = {};
  for (let index = 0; index < options.rounds; index++) {
    const order = roundOrder(implementations, index);
    const partial: Partial<Record<Name, RoundBeforeCeiling>> = {};
    let template: V1PersistentVolume | undefined;
    for (const implementation of order) {
      const { name } = implementation;
      options.log(`compare: round ${index + 1}/${options.rounds}, ${name}`);
      const burst = await burstRound(context, implementation, options, `${name}-${index}`);
      if (index === 0) points[name] = burst.points;
      template ??= burst.template;
      const backlog = await backlogRound(context, implementation, options, `${name}-${index}`);
      partial[name] = { ...burst.round, backlog };
    }
    // The library example's bare client is ours: one ceiling per client stack, and node:http2 alone.
    const clients = roundOrder<BareClient>(['client-go', 'ours', 'node-http2'], index);
    const ceilings = await ceilingRound(context, options, clients, template as V1PersistentVolume, index);
    for (const { name } of order) {
      const measured = partial[name] as RoundBeforeCeiling;
      if (name === 'library') {
        rounds.library.push(measured);
        continue;
      }
      const ceiling = ceilings[name === 'go' ? 'client-go' : 'ours'] as BareClientRound;
      rounds[name].push({
        ...measured,
        ceiling_pv_per_s: ceiling.pv_per_s,
        ceiling_cpu_ms_per_pv: ceiling.cpu_ms_per_pv,
      });
    }
    rounds.nodeHttp2.push(ceilings['node-http2'] as BareClientRound);
  }
  let goDefaults: BurstResult | undefined;
  if (options.goDefaults) {
    options.log('compare: Go reference at client-go defaults (5 QPS / burst 10)');
    goDefaults = (await burstRound(context, go, { ...options, qps: 0, burst: 0 }, 'go-defaults')).round.burst;
  }
  return {
    result: {
      claims: options.claims,
      qps: options.qps,
      burst: options.burst,
      workers: provisionerWorkers,
      go: rounds.go,
      ours: rounds.ours,
      ...(options.library === undefined ? {} : { library: rounds.library }),
      node_http2: rounds.nodeHttp2,
      ...(goDefaults === undefined ? {} : { go_defaults: goDefaults }),
    },
    latencyPoints: points,
  };
}

/** Client flags both CLIs share; 0 leaves the implementation's own default. */
function clientArgs(implementation: Implementation, options: CompareOptions): string[] {
  const limits =
    options.qps > 0 ? [`--kube-api-qps=${options.qps}`, `--kube-api-burst=${options.burst}`] : [];
  return implementation.name === 'go' ? limits : [...limits, ...options.provisionerArgs];
}

async function start(
  context: RunContext,
  space: ClaimNamespace,
  implementation: Implementation,
  options: CompareOptions,
): ReturnType<typeof startProvisioner> {
  return startProvisioner({
    implementation,
    kubeconfigPath: context.cluster.kubeconfigPath,
    root: space.root,
    provisionerName: context.provisionerName,
    leaseNamespace: space.namespace,
    extraArgs: clientArgs(implementation, options),
    nodeFlags: implementation.name === 'go' ? [] : options.nodeFlags,
  });
}

async function burstRound(
  context: RunContext,
  implementation: Implementation,
  options: CompareOptions,
  label: string,
): Promise<{
  round: Omit<RoundBeforeCeiling, 'backlog'>;
  points: LatencyPoint[];
  template: V1PersistentVolume;
}> {
  const space = await context.openClaimNamespace(`burst-${label}`);
  try {
    const provisioner = await start(context, space, implementation, options);
    try {
      const idle = await provisioner.sample();
      const burst = await runBurst(context, space, provisioner, options.claims);
      const deletion = await runDelete(context, space, provisioner, burst.claimNames);
      const { timeline } = space;
      const annotatedAt = timeline.lastAnnotated ?? 0;
      const firstAnnotation = timeline.latencyPoints('annotated')[0]?.at ?? annotatedAt;
      const points = timeline
        .latencyPoints('annotated')
        .map(({ at, latencyMs }) => ({ at: at - firstAnnotation, latencyMs }));
      const lag = ((timeline.lastVolumeAdded ?? annotatedAt) - annotatedAt) / 1000;
      return {
        round: {
          startup_s: seconds(provisioner.syncedAt - provisioner.spawnedAt),
          rss_idle_mb: round(idle.rssMb),
          rss_idle_file_mb: round(idle.rssFileMb),
          burst: burst.result,
          burst_cpu_ms_per_claim: round((burst.result.cpu_s * 1000) / options.claims),
          burst_lag_after_annotation: round(Math.max(0, lag) / burst.result.seconds_to_all_annotated),
          delete: deletion,
        },
        points,
        template: burst.template,
      };
    } finally {
      await provisioner.stop();
    }
  } finally {
    await space.close();
  }
}

async function backlogRound(
  context: RunContext,
  implementation: Implementation,
  options: CompareOptions,
  label: string,
): Promise<BacklogResult> {
  const { claims } = options;
  const space = await context.openClaimNamespace(`backlog-${label}`);
  const { namespace, timeline } = space;
  const deadline = phaseDeadline(claims);
  const names = numberedNames('backlog', claims);
  try {
    await withProgress(
      'backlog: annotated',
      claims,
      () => timeline.counts.claimsAnnotated,
      Promise.all([
        forEachConcurrently(names, claimRequestConcurrency, async (name) => {
          await context.cluster.api
            .resource(resources.persistentVolumeClaims)
            .create(context.claim(name, namespace), { namespace });
        }),
        timeline.until((counts) => counts.claimsAnnotated >= claims, deadline),
      ]),
    );
    // Before the start: a provisioner starts working as its caches sync, before any reading at ready.
    const requestsBefore = await context.cluster.apiRequestCounts();
    const provisioner = await start(context, space, implementation, options);
    try {
      const [ready, controlPlaneReady] = await Promise.all([
        provisioner.sample(),
        context.cluster.controlPlaneCpuS(),
      ]);
      await withProgress(
        'backlog: PVs',
        claims,
        () => timeline.counts.volumesAdded,
        timeline.until((counts) => counts.volumesAdded >= claims, deadline),
      );
      const [done, controlPlaneDone, requestsDone] = await Promise.all([
        provisioner.sample(),
        context.cluster.controlPlaneCpuS(),
        context.cluster.apiRequestCounts(),
      ]);
      const events = await provisioningEvents(context, namespace);
      const fromReady = seconds((timeline.lastVolumeAdded ?? provisioner.syncedAt) - provisioner.syncedAt);
      const result: BacklogResult = {
        claims,
        startup_s: seconds(provisioner.syncedAt - provisioner.spawnedAt),
        seconds_from_ready: fromReady,
        claims_per_s: round(claims / fromReady),
        cpu_ms_per_claim: round(((done.cpuS - ready.cpuS) * 1000) / claims),
        cpu_system_ms_per_claim: round(((done.cpuSystemS - ready.cpuSystemS) * 1000) / claims),
        events_per_claim_at_last_pv: round(events / claims),
        control_plane_cpu_ms_per_claim:
          controlPlaneReady === undefined || controlPlaneDone === undefined
            ? undefined
            : round(((controlPlaneDone - controlPlaneReady) * 1000) / claims),
        api_requests_per_claim: perClaim(requestsBetween(requestsBefore, requestsDone), claims),
        peak_rss_mb: round(done.peakRssMb),
      };
      await runDelete(context, space, provisioner, names);
      return result;
    } finally {
      await provisioner.stop();
    }
  } finally {
    await space.close();
  }
}

/** `served` per claim, rounded, without the kinds of request below 0.01 per claim. */
function perClaim(served: RequestCounts, claims: number): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, count] of [...served].sort(([a], [b]) => a.localeCompare(b))) {
    const value = round(count / claims);
    if (value >= 0.01) result[key] = value;
  }
  return result;
}

/** The claim events a provisioner has written in `namespace` so far, repeated ones counted each time. */
async function provisioningEvents(context: RunContext, namespace: string): Promise<number> {
  const { items } = await context.cluster.api.resource(resources.events).list({ namespace });
  const counted = items.filter((event) => provisioningReasons.has(event.reason ?? ''));
  return counted.reduce((sum, event) => sum + (event.count ?? 1), 0);
}

/** The events the controller records for each claim it provisions. */
const provisioningReasons: ReadonlySet<string> = new Set(['Provisioning', 'ProvisioningSucceeded']);

async function ceilingRound(
  context: RunContext,
  options: CompareOptions,
  order: readonly BareClient[],
  template: V1PersistentVolume,
  index: number,
): Promise<Partial<Record<BareClient, BareClientRound>>> {
  const { claims } = options;
  const results: Partial<Record<BareClient, BareClientRound>> = {};
  for (const client of order) {
    const prefix = `ceiling-${client}-${index}-${context.runId}`;
    const { seconds: elapsed, cpuSeconds } = await createVolumesWithBareClient(
      client,
      ceilingVolume(template, prefix, context.runId),
      {
        goBinary: options.goBinary,
        kubeconfigPath: context.cluster.kubeconfigPath,
        prefix,
        count: claims,
        concurrency: provisionerWorkers,
      },
    );
    results[client] = {
      pv_per_s: round(claims / elapsed),
      cpu_ms_per_pv: round((cpuSeconds * 1000) / claims),
    };
    await deleteCeilingVolumes(context, claims);
  }
  return results;
}
