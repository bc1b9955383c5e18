/**
 * scale: start-up and memory of the provisioner in a cluster full of volumes that are not its own.
 * M pre-bound PV/PVC pairs (each names the other) are created first; the bench does not wait for the
 * PV binder to mark them Bound, which takes it minutes per thousand pairs, so the binder is still
 * catching up while the provisioner starts; then the provisioner starts (start-up and RSS
 * at ready) and provisions N claims (RSS after). With a claim label selector the claim cache holds
 * only the provisioner's claims; the CLI must offer the selector for that variant to run.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resources } from '@kube-provisioner/controller';
import { forEachConcurrently } from './concurrency.ts';
import { foreignPair, numberedNames } from './fixtures.ts';
import { nodeArgs, type OursProgram } from './ours-program.ts';
import { phaseDeadline, withProgress } from './phase.ts';
import { startProvisioner } from './provisioner-process.ts';
import type { ScaleResult, ScaleRun } from './report.ts';
import type { RunContext } from './run-context.ts';
import { round, seconds } from './units.ts';

/** Requests in flight while filling the cluster. */
const fillConcurrency = 32;
/** The label that marks the provisioner's own claims in the selector variant. */
const roleLabel = 'bench.kube-provisioner.io/role';
/** The hostpath CLI flag that would restrict its claim informer (kubernetes#127426). */
const selectorFlag = '--claim-label-selector';

/** Options of {@link runScale}. */
export interface ScaleOptions {
  readonly ours: OursProgram;
  readonly existingPairs: number;
  readonly claims: number;
  /** CLI flags of the provisioner besides the bench's own. */
  readonly extraArgs?: readonly string[];
  /** Node.js flags of the provisioner. */
  readonly nodeFlags?: readonly string[];
}

/** Whether the hostpath CLI accepts {@link selectorFlag}, read from its help text. */
async function cliHasSelectorFlag(ours: OursProgram): Promise<boolean> {
  const { stdout } = await promisify(execFile)(process.execPath, nodeArgs(ours, [], ['--help']));
  return stdout.includes(selectorFlag);
}

/** Fills the cluster, then starts the provisioner with and (if the CLI allows) without a claim selector. */
export async function runScale(context: RunContext, options: ScaleOptions): Promise<ScaleResult> {
  const { existingPairs, claims } = options;
  const foreign = await context.openClaimNamespace('foreign');
  const pairs = Array.from({ length: existingPairs }, (_, index) =>
    foreignPair(index, foreign.namespace, context.runId),
  );
  let created = 0;
  await withProgress(
    'scale: foreign objects',
    existingPairs * 2,
    () => created,
    forEachConcurrently(pairs, fillConcurrency, async ({ volume, claim }) => {
      await context.cluster.api.resource(resources.persistentVolumes).create(volume);
      created++;
      await context.cluster.api
        .resource(resources.persistentVolumeClaims)
        .create(claim, { namespace: foreign.namespace });
      created++;
    }),
  );
  await foreign.close();

  const selectors: (string | null)[] = [null];
  if (await cliHasSelectorFlag(options.ours)) selectors.push(`${roleLabel}=provisioner`);
  else
    process.stderr.write(`scale: the hostpath CLI has no ${selectorFlag}; only the run without a selector\n`);
  const runs: ScaleRun[] = [];
  for (const selector of selectors) runs.push(await scaleRun(context, options, selector));
  return { existing_pairs: existingPairs, claims, runs };
}

async function scaleRun(
  context: RunContext,
  options: ScaleOptions,
  selector: string | null,
): Promise<ScaleRun> {
  const { claims } = options;
  const space = await context.openClaimNamespace(selector === null ? 'scale' : 'scale-selector');
  const provisioner = await startProvisioner({
    implementation: { name: 'ours', program: options.ours },
    kubeconfigPath: context.cluster.kubeconfigPath,
    root: space.root,
    provisionerName: context.provisionerName,
    leaseNamespace: space.namespace,
    extraArgs: [...(options.extraArgs ?? []), ...(selector === null ? [] : [`${selectorFlag}=${selector}`])],
    ...(options.nodeFlags === undefined ? {} : { nodeFlags: options.nodeFlags }),
  });
  try {
    const ready = await provisioner.sample();
    const startup = {
      startup_ready_s: seconds(provisioner.syncedAt - provisioner.spawnedAt),
      readyz_s: seconds(provisioner.readyzAt - provisioner.spawnedAt),
      rss_ready_mb: round(ready.rssMb),
    };
    // Printed now: the PV phase that follows can outlast its deadline behind the binder's backlog.
    process.stderr.write(
      `scale: ready (${selector ?? 'no selector'}): caches synced ${startup.startup_ready_s} s, ` +
        `/readyz ${startup.readyz_s} s, RSS ${startup.rss_ready_mb} MiB\n`,
    );
    const firstCreate = performance.now();
    const { namespace, timeline } = space;
    await withProgress(
      'scale: PVs',
      claims,
      () => timeline.counts.volumesAdded,
      Promise.all([
        forEachConcurrently(numberedNames('scale', claims), fillConcurrency, async (name) => {
          await context.cluster.api
            .resource(resources.persistentVolumeClaims)
            .create(context.claim(name, namespace, { [roleLabel]: 'provisioner' }), { namespace });
        }),
        // The binder annotates our claims only after the foreign pairs queued before them.
        timeline.until(
          (counts) => counts.volumesAdded >= claims,
          phaseDeadline(claims + options.existingPairs),
        ),
      ]),
    );
    const after = await provisioner.sample();
    return {
      label_selector: selector,
      ...startup,
      seconds_to_all_pv: seconds((timeline.lastVolumeAdded ?? firstCreate) - firstCreate),
      rss_after_provisioning_mb: round(after.rssMb),
      peak_rss_mb: round(after.peakRssMb),
    };
  } finally {
    await provisioner.stop();
    await space.close();
  }
}
