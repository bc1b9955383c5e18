#!/usr/bin/env node
/**
 * What enforcing sizes costs hostpath per claim: the shipped CLI (bundled) runs inside the test guest
 * (User-Mode Linux: this machine's kernel has no project quotas) on one XFS root mounted with
 * `prjquota`, against the cluster of `TESTENV_KUBECONFIG` (or a fresh testenv). In each round, `--claims`
 * claims of a class with `enforceSize: "true"` and as many of a class without are provisioned and
 * deleted, one class after the other, the order swapped every round. The provisioner process's CPU
 * (utime + stime of `/proc/<pid>/stat` in the guest) is read before and after each phase; wall time
 * is from the claims' creation (deletion) to the last Bound claim (gone PV). Usage reporting is off,
 * so only provisioning and deletion are measured. Reported, never asserted.
 *
 *   npm exec -- node packages/testenv/src/cli.ts exec -- npm exec -- node \
 *     --conditions=@kube-provisioner/source packages/bench/src/enforcement-cost.ts \
 *     [--claims 50] [--rounds 2] [--out <file.json>]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClaims, waitFor } from '@kube-provisioner/testenv';
import {
  createQuotaFileSystem,
  type Guest,
  type GuestProgram,
  startGuest,
} from '@kube-provisioner/testenv/guest';
import { bundleProgram } from '@kube-provisioner/testenv/internal';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { type BenchCluster, openBenchCluster } from './bench-cluster.ts';
import { positiveInteger } from './bench-options.ts';
import { median } from './compare-table.ts';
import { hostpathCli } from './ours-program.ts';
import { parseChildCpuTimes, parseCpuTimes } from './proc-stats.ts';

const { values } = parseArgs({
  options: {
    claims: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
    out: { type: 'string' },
  },
});
const claims = positiveInteger('claims', values.claims);
const rounds = positiveInteger('rounds', values.rounds);
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Whether the class enforces sizes. */
type Enforcement = 'on' | 'off';

/** One phase of one class in one round, per claim. */
interface PhaseCost {
  readonly cpuMs: number;
  readonly userMs: number;
  readonly systemMs: number;
  /** CPU of the programs it ran and waited for (`xfs_quota`), not in `cpuMs`. */
  readonly childrenCpuMs: number;
  readonly wallMs: number;
}

interface RoundResult {
  readonly round: number;
  readonly order: readonly Enforcement[];
  readonly provision: Readonly<Record<Enforcement, PhaseCost>>;
  readonly delete: Readonly<Record<Enforcement, PhaseCost>>;
}

// A loaded host stalls the one-CPU guest for seconds: generous lease timings keep the leader.
const leaseFlags = [
  '--leader-election-lease-duration=60s',
  '--leader-election-renew-deadline=45s',
  '--leader-election-retry-period=5s',
];

async function cpuOf(
  guest: Guest,
  pid: number,
): Promise<{ userS: number; systemS: number; childrenS: number }> {
  const stat = await guest.sh('cat "/proc/$1/stat"', { args: [String(pid)] });
  const children = parseChildCpuTimes(stat);
  return { ...parseCpuTimes(stat), childrenS: children.userS + children.systemS };
}

/** Runs `work` and returns its CPU in the provisioner and wall time, per claim. */
async function measured(guest: Guest, pid: number, work: () => Promise<void>): Promise<PhaseCost> {
  const before = await cpuOf(guest, pid);
  const start = performance.now();
  await work();
  const wallMs = performance.now() - start;
  const after = await cpuOf(guest, pid);
  const perClaim = (seconds: number): number => Number(((seconds * 1000) / claims).toFixed(2));
  const userS = after.userS - before.userS;
  const systemS = after.systemS - before.systemS;
  return {
    cpuMs: perClaim(userS + systemS),
    userMs: perClaim(userS),
    systemMs: perClaim(systemS),
    childrenCpuMs: perClaim(after.childrenS - before.childrenS),
    wallMs: Number((wallMs / claims).toFixed(1)),
  };
}

async function run(cluster: BenchCluster, guest: Guest): Promise<RoundResult[]> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const storage = cluster.kubeConfig.makeApiClient(StorageV1Api);
  const fileSystem = await createQuotaFileSystem(guest, { type: 'xfs', sizeMiB: 1024 });
  const suffix = `${process.pid}`;
  const provisionerName = `enforcement-cost.kube-provisioner.io/${suffix}`;
  const namespace = `enforcement-cost-${suffix}`;
  const classOf: Record<Enforcement, string> = {
    on: `enforcement-cost-on-${suffix}`,
    off: `enforcement-cost-off-${suffix}`,
  };
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const enforcement of ['on', 'off'] as const) {
    await storage.createStorageClass({
      body: {
        metadata: { name: classOf[enforcement] },
        provisioner: provisionerName,
        parameters: enforcement === 'on' ? { enforceSize: 'true' } : {},
        reclaimPolicy: 'Delete',
      },
    });
  }
  const bundle = join(guest.shareDir, 'bin', 'kube-hostpath-provisioner.mjs');
  await bundleProgram({ entry: hostpathCli(), outfile: bundle });
  const root = `${fileSystem.mountPoint}/volumes`;
  await guest.sh('mkdir -p "$1"', { args: [root] });
  const program: GuestProgram = await guest.spawn(
    [
      'node',
      guest.guestPath(bundle),
      '--mode=shared',
      `--provisioner-name=${provisionerName}`,
      `--root=${root}`,
      '--usage-scan-rate=0',
      ...leaseFlags,
    ],
    { env: { KUBECONFIG: await guest.kubeconfig(cluster.kubeconfigPath), POD_NAMESPACE: namespace } },
  );
  const claimsOf = async (names: readonly string[]) =>
    (await core.listNamespacedPersistentVolumeClaim({ namespace })).items.filter((claim) =>
      names.includes(claim.metadata?.name ?? ''),
    );
  const bind = async (enforcement: Enforcement, names: readonly string[]): Promise<void> => {
    await createClaims(cluster.kubeConfig, {
      namespace,
      storageClassName: classOf[enforcement],
      names,
      storage: '1Mi',
    });
    await waitFor(
      async () =>
        (await claimsOf(names)).every((claim) => claim.status?.phase === 'Bound') ? true : undefined,
      {
        timeoutMs: 600_000,
        intervalMs: 250,
        description: `${names.length} claims (enforcement ${enforcement}) to be Bound`,
      },
    );
  };
  const remove = async (names: readonly string[]): Promise<void> => {
    const volumeNames = new Set((await claimsOf(names)).map((claim) => claim.spec?.volumeName));
    await Promise.all(names.map((name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name })));
    await waitFor(
      async () =>
        (await core.listPersistentVolume()).items.some((pv) => volumeNames.has(pv.metadata?.name))
          ? undefined
          : true,
      { timeoutMs: 600_000, intervalMs: 250, description: `the PVs of ${names.length} claims to be deleted` },
    );
  };
  try {
    // A warm-up claim of each class leaves start-up, leader election and the first quota calls out.
    for (const enforcement of ['off', 'on'] as const) {
      await bind(enforcement, [`warm-up-${enforcement}`]);
      await remove([`warm-up-${enforcement}`]);
    }
    const results: RoundResult[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order: readonly Enforcement[] = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
      const provision: Partial<Record<Enforcement, PhaseCost>> = {};
      const deletion: Partial<Record<Enforcement, PhaseCost>> = {};
      for (const enforcement of order) {
        const names = Array.from({ length: claims }, (_, index) => `r${round}-${enforcement}-${index}`);
        provision[enforcement] = await measured(guest, program.pid, () => bind(enforcement, names));
        deletion[enforcement] = await measured(guest, program.pid, () => remove(names));
        log(
          `round ${round}, enforcement ${enforcement}: provision ${JSON.stringify(provision[enforcement])}, ` +
            `delete ${JSON.stringify(deletion[enforcement])}`,
        );
      }
      results.push({
        round,
        order,
        provision: provision as Record<Enforcement, PhaseCost>,
        delete: deletion as Record<Enforcement, PhaseCost>,
      });
    }
    return results;
  } catch (err) {
    log(`the provisioner's last output:\n${program.output().slice(-6000)}`);
    throw err;
  } finally {
    const code = await program.stop(60_000);
    if (code !== 0) log(`the provisioner exited with ${code}:\n${program.output().slice(-4000)}`);
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    for (const name of Object.values(classOf)) {
      await storage.deleteStorageClass({ name }).catch(() => undefined);
    }
    await fileSystem.remove().catch((err: Error) => log(`could not remove the XFS root: ${err.message}`));
  }
}

/** Medians over the rounds of each figure, and of the per-round ratio on ÷ off. */
function summarize(results: readonly RoundResult[]) {
  const figure = (phase: 'provision' | 'delete', key: keyof PhaseCost) => {
    const on = median(results.map((r) => r[phase].on[key]));
    const off = median(results.map((r) => r[phase].off[key]));
    // Without enforcement no tool runs: its children's CPU is zero, and has no ratio.
    const ratio = results.every((r) => r[phase].off[key] > 0)
      ? Number(median(results.map((r) => r[phase].on[key] / r[phase].off[key])).toFixed(2))
      : null;
    return { off, on, ratio };
  };
  return {
    provision: {
      cpuMs: figure('provision', 'cpuMs'),
      childrenCpuMs: figure('provision', 'childrenCpuMs'),
      wallMs: figure('provision', 'wallMs'),
    },
    delete: {
      cpuMs: figure('delete', 'cpuMs'),
      childrenCpuMs: figure('delete', 'childrenCpuMs'),
      wallMs: figure('delete', 'wallMs'),
    },
  };
}

const cluster = await openBenchCluster(log);
const guest = await startGuest({ onProgress: log });
try {
  const results = await run(cluster, guest);
  const summary = summarize(results);
  const labels = { cpuMs: 'CPU ms', childrenCpuMs: 'xfs_quota CPU ms', wallMs: 'wall ms' };
  const rows = [['per claim (medians)', 'off', 'on', 'on ÷ off']];
  for (const phase of ['provision', 'delete'] as const) {
    for (const key of ['cpuMs', 'childrenCpuMs', 'wallMs'] as const) {
      const { off, on, ratio } = summary[phase][key];
      rows.push([`${phase} ${labels[key]}`, String(off), String(on), String(ratio ?? '—')]);
    }
  }
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  process.stdout.write(
    `${rows.map((row) => row.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ')).join('\n')}\n`,
  );
  if (values.out !== undefined) {
    await mkdir(dirname(values.out), { recursive: true });
    const report = { claims, rounds, fileSystem: 'xfs prjquota, 1 GiB, in the test guest', summary, results };
    await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
} finally {
  await guest.stop();
  await cluster.close();
}
