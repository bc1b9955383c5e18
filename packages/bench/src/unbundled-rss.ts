#!/usr/bin/env node
/**
 * Idle memory as library users run ours, against the Go library in the same run: the custom-provisioner
 * example and each CLI installed from its packed npm package (`packed-programs.ts`), every one run with
 * plain `node` (no bundle, no flags) and a kubeconfig file, beside `bench-go provisioner`, all against
 * one control plane (`TESTENV_KUBECONFIG`'s, or a fresh testenv). Each round starts every program in
 * turn (the order rotating) and reads its RSS once its caches synced and again after `--idle-seconds`.
 * Plain `node` with `node:http2` loaded, idle, gives the floor of any Node.js provisioner. Then
 * `import('@kube-provisioner/controller')` is timed in `--imports` fresh processes.
 * `--baseline <dir>` adds the tarballs an earlier checkout packed (`npm pack --workspace packages/…
 * --pack-destination <dir>`), measured in the same rounds: before and after.
 *
 *   npm run build && npm exec -- node --conditions=@kube-provisioner/source \
 *     packages/bench/src/unbundled-rss.ts [--rounds 3] [--idle-seconds 5] [--imports 7] [--baseline <dir>]
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { openBenchCluster } from './bench-cluster.ts';
import { positiveInteger } from './bench-options.ts';
import { ensureBenchGo } from './go-build.ts';
import { installPackedPrograms, type PackedInstall, type PackedProgram } from './packed-programs.ts';
import { percentile } from './percentiles.ts';
import { sampleProcess } from './proc-stats.ts';
import { type Implementation, startProvisioner } from './provisioner-process.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'idle-seconds': { type: 'string', default: '5' },
    imports: { type: 'string', default: '7' },
    baseline: { type: 'string' },
  },
});
const rounds = positiveInteger('rounds', values.rounds);
const idleMs = positiveInteger('idle-seconds', values['idle-seconds']) * 1000;
const imports = positiveInteger('imports', values.imports);
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** RSS readings of one program: once synced and after the idle wait, one per round, MiB. */
interface Readings {
  readonly synced: number[];
  readonly idle: number[];
}

const goLabel = 'Go library v13 (bench-go provisioner)';

const installs: { readonly name: string; readonly install: PackedInstall }[] = [];
const goBinary = await ensureBenchGo(log);
const cluster = await openBenchCluster(log);
try {
  installs.push({ name: 'now', install: await installPackedPrograms(log) });
  if (values.baseline !== undefined) {
    installs.push({ name: 'baseline', install: await installPackedPrograms(log, resolve(values.baseline)) });
  }
  const programs: PackedProgram[] = [
    { label: goLabel, implementation: { name: 'go', binary: goBinary } },
    ...installs.flatMap(({ name, install }) =>
      install.programs.map((program) => ({ ...program, label: `${program.label}, ${name}` })),
    ),
  ];
  let started = 0;
  const readings = new Map(programs.map(({ label }) => [label, { synced: [], idle: [] } as Readings]));
  for (let round = 0; round < rounds; round++) {
    // Rotated, so no program always runs first (page cache, the control plane's warmth).
    const order = programs.map((_, index) => programs[(index + round) % programs.length] as PackedProgram);
    for (const { label, implementation } of order) {
      const reading = await measureIdle(implementation, started++);
      const entry = readings.get(label) as Readings;
      entry.synced.push(reading.synced);
      entry.idle.push(reading.idle);
      log(
        `round ${round + 1}: ${label}: ${reading.synced.toFixed(1)} MiB synced, ${reading.idle.toFixed(1)} MiB idle`,
      );
    }
  }
  const floor: number[] = [];
  for (let round = 0; round < rounds; round++) floor.push(await measureFloor());
  const go = readings.get(goLabel) as Readings;
  process.stdout.write(
    `\nidle RSS with a kubeconfig file, ${rounds} round(s), ${idleMs / 1000} s idle; ratio: median of the per-round ratios to Go; load average ${loadavg()[0]?.toFixed(1)}\n\n`,
  );
  process.stdout.write('| program | RSS caches synced | RSS idle | idle ÷ Go |\n| --- | --- | --- | --- |\n');
  for (const { label } of programs) {
    const { synced, idle } = readings.get(label) as Readings;
    const ratio =
      label === goLabel
        ? ''
        : median(idle.map((value, round) => value / (go.idle[round] as number))).toFixed(2);
    process.stdout.write(`| ${label} | ${range(synced)} MiB | ${range(idle)} MiB | ${ratio} |\n`);
  }
  process.stdout.write(
    `| Node.js alone: node:http2 imported, idle | | ${range(floor)} MiB | ${median(floor.map((value, round) => value / (go.idle[round] as number))).toFixed(2)} |\n`,
  );
  process.stdout.write(
    `\nimport('@kube-provisioner/controller'), plain node, ${imports} fresh processes\n\n`,
  );
  process.stdout.write('| install | median time | median CPU | peak RSS |\n| --- | --- | --- | --- |\n');
  for (const { name, install } of installs) {
    const samples: ImportSample[] = [];
    for (let index = 0; index < imports; index++) samples.push(await timeImport(install.dir));
    process.stdout.write(
      `| ${name} | ${median(samples.map((sample) => sample.ms)).toFixed(0)} ms | ${median(samples.map((sample) => sample.cpuMs)).toFixed(0)} ms | ${range(samples.map((sample) => sample.maxRssMb))} MiB |\n`,
    );
  }
} finally {
  await cluster.close();
  for (const { install } of installs) await install.close();
}

/** Starts `implementation`, reads its RSS once synced and after the idle wait, and stops it. */
async function measureIdle(
  implementation: Implementation,
  id: number,
): Promise<{ synced: number; idle: number }> {
  const root = await mkdtemp(join(tmpdir(), 'unbundled-rss-'));
  const provisioner = await startProvisioner({
    implementation,
    kubeconfigPath: cluster.kubeconfigPath,
    root,
    provisionerName: `unbundled-rss.kube-provisioner.io/run-${process.pid}-${id}-${implementation.name}`,
    leaseNamespace: 'default',
  });
  try {
    const synced = (await provisioner.sample()).rssMb;
    // Measurement spacing, not synchronisation: what an idle provisioner holds a few seconds on.
    await sleep(idleMs);
    return { synced, idle: (await provisioner.sample()).rssMb };
  } finally {
    await provisioner.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * The least any Node.js provisioner holds: plain `node` with `node:http2` (and with it TLS) loaded,
 * idle for the same wait, no code of ours.
 */
async function measureFloor(): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await import('node:http2'); console.log('ready'); setInterval(() => {}, 60_000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const [line] = (await once(
      createInterface({ input: child.stdout as NodeJS.ReadableStream }),
      'line',
    )) as [string];
    if (line !== 'ready') throw new Error(`the Node.js floor process printed ${JSON.stringify(line)}`);
    await sleep(idleMs);
    return (await sampleProcess(child.pid as number)).rssMb;
  } finally {
    child.kill();
  }
}

/** One import in a fresh process: its wall time, its CPU time (steadier on a busy machine) and the process's peak RSS. */
interface ImportSample {
  readonly ms: number;
  readonly cpuMs: number;
  readonly maxRssMb: number;
}

/** One fresh `node` importing the controller from `dir`. */
async function timeImport(dir: string): Promise<ImportSample> {
  const script = `
    const started = performance.now();
    const cpu = process.cpuUsage();
    await import('@kube-provisioner/controller');
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    console.log(JSON.stringify({ ms, cpuMs: (user + system) / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
  });
  return JSON.parse(stdout) as ImportSample;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

function range(values: readonly number[]): string {
  const low = Math.min(...values).toFixed(1);
  const high = Math.max(...values).toFixed(1);
  return low === high ? low : `${low} – ${high}`;
}
