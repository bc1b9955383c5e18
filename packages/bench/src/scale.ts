/**
 * scale: start-up, memory and provisioning of the Go library v13 and ours in a cluster full of
 * volumes that are not theirs. The cluster is filled to each size of `existingPairs` in turn with
 * foreign Bound PV/PVC pairs; at each size, every round starts the Go reference and ours one after
 * the other (rotating which goes first), each in a fresh namespace: start → caches synced and RSS
 * then, N claims provisioned and RSS after. The claims and PVs of a run are removed before the next,
 * so each starts among the same objects.
 *
 * kube-controller-manager is stopped for the whole scenario: testenv runs its PV binder with a 2 s
 * resync, which at 100 000 pairs re-examines 200 000 objects every 2 s on the cores the provisioners
 * run on. The bench sets the provisioner annotation on its claims itself, as the binder would.
 */
import { join } from 'node:path';
import { isNotFound, type KubeApiClient, resources } from '@kube-provisioner/controller/client';
import { provisionerAnnotations } from './claim-timeline.ts';
import { roundOrder } from './compare.ts';
import { forEachConcurrently } from './concurrency.ts';
import { numberedNames } from './fixtures.ts';
import type { OursProgram } from './ours-program.ts';
import { phaseTimeoutMs, withProgress } from './phase.ts';
import { sampleProcess } from './proc-stats.ts';
import { type Implementation, startProvisioner } from './provisioner-process.ts';
import type { ControlPlaneMemory, ScaleResult, ScaleRun, ScaleStep } from './report.ts';
import type { RunContext } from './run-context.ts';
import { fillConcurrency, fillForeignPairs } from './scale-fill.ts';
import { scaleGrowth } from './scale-table.ts';
import { round, seconds } from './units.ts';

/** How long a run's claims may take to get their PVs; the Go reference needs 30 s for 1000 on a busy machine. */
function provisionTimeoutMs(claims: number): number {
  return 60_000 + claims * 100;
}

/** Options of {@link runScale}. */
export interface ScaleOptions {
  readonly ours: OursProgram;
  /** The `bench-go` executable. */
  readonly goBinary: string;
  /** Sizes in pairs, increasing; the cluster is filled to each in turn and measured there. */
  readonly existingPairs: readonly number[];
  readonly claims: number;
  readonly rounds: number;
  /** Client QPS and burst given to both. */
  readonly qps: number;
  readonly burst: number;
  /** Extra CLI and Node.js flags of ours. */
  readonly provisionerArgs: readonly string[];
  readonly nodeFlags: readonly string[];
  readonly log: (message: string) => void;
  /** Where each run's provisioner log is written (`<namespace>.log`); nowhere when undefined. */
  readonly logDir?: string | undefined;
}

/** Fills the cluster step by step and runs both provisioners at each step; see the module comment. */
export async function runScale(context: RunContext, options: ScaleOptions): Promise<ScaleResult> {
  const { controlPlane } = context.cluster;
  if (controlPlane === undefined) {
    options.log('scale: the control plane is unknown (no TESTENV_DIR): the PV binder keeps running');
  } else {
    options.log('scale: stopping kube-controller-manager (PV binder) for the scenario');
    await controlPlane.stopComponent('kube-controller-manager');
  }
  try {
    const foreign = await context.openClaimNamespace('foreign');
    await foreign.close();
    const steps: ScaleStep[] = [];
    let filled = 0;
    for (const size of options.existingPairs) {
      const started = performance.now();
      let created = filled;
      await withProgress(
        'scale: foreign pairs',
        size,
        () => created,
        fillForeignPairs(
          context.cluster.api,
          foreign.namespace,
          context.runId,
          { from: filled, to: size },
          () => {
            created++;
          },
        ),
      );
      const fillSeconds = seconds(performance.now() - started);
      options.log(`scale: ${size} pairs (${size - filled} added in ${fillSeconds} s)`);
      filled = size;
      const runs: ScaleRun[] = [];
      for (let index = 0; index < options.rounds; index++) {
        for (const implementation of roundOrder(implementationsOf(options), index)) {
          runs.push(await scaleRun(context, options, implementation, size, index));
        }
      }
      steps.push({
        existing_pairs: size,
        fill_seconds: fillSeconds,
        control_plane: await controlPlaneMemory(context),
        runs,
      });
    }
    return {
      claims: options.claims,
      rounds: options.rounds,
      qps: options.qps,
      burst: options.burst,
      binder: controlPlane === undefined ? 'running' : 'stopped',
      steps,
      growth: scaleGrowth(steps),
    };
  } finally {
    await controlPlane?.startComponent('kube-controller-manager');
  }
}

function implementationsOf(options: ScaleOptions): Implementation[] {
  return [
    { name: 'go', binary: options.goBinary },
    { name: 'ours', program: options.ours },
  ];
}

async function scaleRun(
  context: RunContext,
  options: ScaleOptions,
  implementation: Implementation,
  existingPairs: number,
  index: number,
): Promise<ScaleRun> {
  const { claims } = options;
  const name = implementation.name === 'go' ? 'go' : 'ours';
  options.log(`scale: ${existingPairs} pairs, round ${index + 1}/${options.rounds}, ${name}`);
  const space = await context.openClaimNamespace(`scale-${existingPairs}-${name}-${index}`);
  const { namespace, timeline } = space;
  const limits = [`--kube-api-qps=${options.qps}`, `--kube-api-burst=${options.burst}`];
  /** The claims created so far, by name, with their UIDs. */
  const created: { readonly name: string; readonly uid: string }[] = [];
  try {
    const provisioner = await startProvisioner({
      implementation,
      kubeconfigPath: context.cluster.kubeconfigPath,
      root: space.root,
      provisionerName: context.provisionerName,
      leaseNamespace: namespace,
      extraArgs: name === 'go' ? limits : [...limits, ...options.provisionerArgs],
      nodeFlags: name === 'go' ? [] : options.nodeFlags,
      readyTimeoutMs: phaseTimeoutMs(existingPairs),
      ...(options.logDir === undefined ? {} : { logFile: join(options.logDir, `${namespace}.log`) }),
    });
    try {
      const ready = await provisioner.sample();
      const startupReadyS = seconds(provisioner.syncedAt - provisioner.spawnedAt);
      options.log(`scale: ${name} caches synced in ${startupReadyS} s, RSS ${round(ready.rssMb)} MiB`);
      const annotations = Object.fromEntries(
        provisionerAnnotations.map((key) => [key, context.provisionerName]),
      );
      const firstCreate = performance.now();
      await withProgress(
        `scale: ${name} PVs`,
        claims,
        () => timeline.counts.volumesAdded,
        Promise.all([
          forEachConcurrently(numberedNames('scale', claims), fillConcurrency, async (claimName) => {
            const claim = context.claim(claimName, namespace);
            const stored = await context.cluster.api
              .resource(resources.persistentVolumeClaims)
              .create({ ...claim, metadata: { ...claim.metadata, annotations } }, { namespace });
            created.push({ name: claimName, uid: stored.metadata?.uid ?? '' });
          }),
          // A provisioner that stalls is reported as such, not waited for: the other still runs.
          timeline
            .until((counts) => counts.volumesAdded >= claims, AbortSignal.timeout(provisionTimeoutMs(claims)))
            .catch(() => undefined),
        ]),
      );
      const after = await provisioner.sample();
      const pvsSeen = timeline.counts.volumesAdded;
      const allPvS =
        pvsSeen >= claims ? seconds((timeline.lastVolumeAdded ?? firstCreate) - firstCreate) : null;
      if (allPvS === null) options.log(`scale: ${name} made ${pvsSeen} of ${claims} PVs in time`);
      return {
        implementation: name,
        round: index,
        startup_ready_s: startupReadyS,
        rss_ready_mb: round(ready.rssMb),
        pvs_seen: pvsSeen,
        seconds_to_all_pv: allPvS,
        claims_per_s: allPvS === null ? null : round(claims / allPvS),
        rss_after_provisioning_mb: round(after.rssMb),
        peak_rss_mb: round(after.peakRssMb),
      };
    } finally {
      await provisioner.stop();
    }
  } finally {
    await space.close();
    await removeRun(context.cluster.api, namespace, created);
  }
}

/**
 * Removes a run's claims and their PVs (`pvc-<claim uid>`, both libraries' names) with their
 * protection finalizers, whose controller is stopped, so the next run starts among the same objects.
 */
async function removeRun(
  api: KubeApiClient,
  namespace: string,
  created: readonly { readonly name: string; readonly uid: string }[],
): Promise<void> {
  const claims = api.resource(resources.persistentVolumeClaims);
  const volumes = api.resource(resources.persistentVolumes);
  const unfinalized = { metadata: { finalizers: null } };
  const ignoreMissing = (err: unknown): void => {
    if (!isNotFound(err)) throw err;
  };
  await forEachConcurrently(created, fillConcurrency, async ({ name, uid }) => {
    await claims.patch(name, unfinalized, 'merge', { namespace }).catch(ignoreMissing);
    await claims.delete(name, { namespace }).catch(ignoreMissing);
    await volumes.patch(`pvc-${uid}`, unfinalized, 'merge').catch(ignoreMissing);
    await volumes.delete(`pvc-${uid}`).catch(ignoreMissing);
  });
}

/** RSS of etcd and kube-apiserver now; undefined when their processes are unknown. */
async function controlPlaneMemory(context: RunContext): Promise<ControlPlaneMemory | undefined> {
  const processes = await context.cluster.controlPlane?.processes();
  const etcd = processes?.etcd;
  const apiserver = processes?.['kube-apiserver'];
  if (etcd === undefined || apiserver === undefined) return undefined;
  const [etcdSample, apiserverSample] = await Promise.all([sampleProcess(etcd), sampleProcess(apiserver)]);
  return {
    etcd_rss_mb: round(etcdSample.rssMb),
    kube_apiserver_rss_mb: round(apiserverSample.rssMb),
  };
}
