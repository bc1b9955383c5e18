/**
 * The unbundled scenario: idle memory as library users run ours, against the Go library in the same
 * run. The custom-provisioner example and each CLI installed from its packed npm package
 * (`packed-programs.ts`), every one run with plain `node` (no bundle, no flags) and a kubeconfig file,
 * beside `bench-go provisioner`. Each round starts every program in turn (the order rotating) and reads
 * its RSS once its caches synced and again after the idle wait. Plain `node` with `node:http2` loaded,
 * idle, gives the floor of any Node.js provisioner. Then the import of `@kube-provisioner/controller`
 * is timed in fresh processes. A baseline directory adds the tarballs an earlier checkout packed,
 * measured in the same rounds: before and after.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, medianRatio } from './compare-table.ts';
import { type ImportSample, timeImport } from './import-time.ts';
import { installPackedPrograms, type PackedInstall } from './packed-programs.ts';
import { sampleProcess } from './proc-stats.ts';
import { type Implementation, startProvisioner } from './provisioner-process.ts';
import type { ImportTiming, UnbundledInstall, UnbundledProgram, UnbundledResult } from './report.ts';
import type { RunContext } from './run-context.ts';
import { round } from './units.ts';

/** Options of {@link runUnbundled}. */
export interface UnbundledOptions {
  readonly rounds: number;
  readonly idleSeconds: number;
  /** Fresh processes that each time the import. */
  readonly imports: number;
  /** Tarballs an earlier checkout packed, measured beside this checkout's; none when undefined. */
  readonly baseline: string | undefined;
  /** `bench-go provisioner` ({@link ensureBenchGo}). */
  readonly goBinary: string;
  readonly log: (message: string) => void;
}

/** A program of the rounds and its readings so far. */
interface Contestant {
  readonly program: string;
  readonly install: UnbundledInstall;
  readonly implementation: Implementation;
  readonly synced: number[];
  readonly idle: number[];
}

/** Packs and installs ours (and the baseline), and measures every program and the import. */
export async function runUnbundled(context: RunContext, options: UnbundledOptions): Promise<UnbundledResult> {
  const { rounds, idleSeconds, log } = options;
  const installs: { readonly install: Exclude<UnbundledInstall, 'go'>; readonly packed: PackedInstall }[] =
    [];
  try {
    installs.push({ install: 'now', packed: await installPackedPrograms(log) });
    if (options.baseline !== undefined) {
      installs.push({ install: 'baseline', packed: await installPackedPrograms(log, options.baseline) });
    }
    const contestant = (program: string, install: UnbundledInstall, implementation: Implementation) => ({
      program,
      install,
      implementation,
      synced: [] as number[],
      idle: [] as number[],
    });
    const contestants: Contestant[] = [
      contestant('Go library v13 (bench-go provisioner)', 'go', { name: 'go', binary: options.goBinary }),
      ...installs.flatMap(({ install, packed }) =>
        packed.programs.map(({ label, implementation }) => contestant(label, install, implementation)),
      ),
    ];
    let started = 0;
    for (let round = 0; round < rounds; round++) {
      // Rotated, so no program always runs first (page cache, the control plane's warmth).
      const order = contestants.map(
        (_, index) => contestants[(index + round) % contestants.length] as Contestant,
      );
      for (const entry of order) {
        const reading = await measureIdle(context, entry.implementation, started++, idleSeconds);
        entry.synced.push(reading.synced);
        entry.idle.push(reading.idle);
        log(
          `unbundled round ${round + 1}: ${entry.program}, ${entry.install}: ` +
            `${reading.synced.toFixed(1)} MiB synced, ${reading.idle.toFixed(1)} MiB idle`,
        );
      }
    }
    const floor: number[] = [];
    for (let round = 0; round < rounds; round++) floor.push(await measureFloor(idleSeconds));
    const goIdle = (contestants[0] as Contestant).idle;
    const imports: ImportTiming[] = [];
    for (const { install, packed } of installs) {
      const samples: ImportSample[] = [];
      for (let index = 0; index < options.imports; index++) samples.push(await timeImport(packed.dir));
      imports.push(importTiming(install, samples));
    }
    return {
      rounds,
      idle_seconds: idleSeconds,
      programs: contestants.map(
        ({ program, install, synced, idle }): UnbundledProgram => ({
          program,
          install,
          rss_synced_mb: synced.map(round),
          rss_idle_mb: idle.map(round),
          ...(install === 'go' ? {} : { idle_ratio_to_go: round(medianRatio(idle, goIdle)) }),
        }),
      ),
      node_alone_idle_mb: floor.map(round),
      node_alone_idle_ratio_to_go: round(medianRatio(floor, goIdle)),
      import: imports,
    };
  } finally {
    for (const { packed } of installs) await packed.close();
  }
}

function importTiming(install: ImportTiming['install'], samples: readonly ImportSample[]): ImportTiming {
  const ms = samples.map((sample) => Math.round(sample.ms));
  const cpuMs = samples.map((sample) => Math.round(sample.cpuMs));
  return {
    install,
    ms,
    cpu_ms: cpuMs,
    peak_rss_mb: samples.map((sample) => round(sample.maxRssMb)),
    median_ms: median(ms),
    median_cpu_ms: median(cpuMs),
  };
}

/** Starts `implementation`, reads its RSS once synced and after the idle wait, and stops it. */
async function measureIdle(
  context: RunContext,
  implementation: Implementation,
  id: number,
  idleSeconds: number,
): Promise<{ synced: number; idle: number }> {
  const root = await mkdtemp(join(tmpdir(), 'bench-unbundled-'));
  const provisioner = await startProvisioner({
    implementation,
    kubeconfigPath: context.cluster.kubeconfigPath,
    root,
    provisionerName: `unbundled.kube-provisioner.io/run-${context.runId}-${id}-${implementation.name}`,
    leaseNamespace: 'default',
  });
  try {
    const synced = (await provisioner.sample()).rssMb;
    // Measurement spacing, not synchronisation: what an idle provisioner holds a few seconds on.
    await sleep(idleSeconds * 1000);
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
async function measureFloor(idleSeconds: number): Promise<number> {
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
    await sleep(idleSeconds * 1000);
    return (await sampleProcess(child.pid as number)).rssMb;
  } finally {
    child.kill();
  }
}
