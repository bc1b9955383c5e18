/**
 * The conditions of a run: machine, load, versions and commit, recorded beside the figures because
 * on a shared two-core machine they matter as much as the code.
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { promisify } from 'node:util';
import type { RunEnvironment } from './report.ts';

const run = promisify(execFile);

/** `HEAD` of the repository at `cwd`, with `-dirty` when the working tree has changes; `unknown` outside git. */
export async function gitCommit(cwd: string): Promise<string> {
  try {
    const { stdout: head } = await run('git', ['rev-parse', '--short=12', 'HEAD'], { cwd });
    const { stdout: status } = await run('git', ['status', '--porcelain', '--untracked-files=no'], { cwd });
    return `${head.trim()}${status.trim() === '' ? '' : '-dirty'}`;
  } catch {
    return 'unknown';
  }
}

/** Load averages rounded to two decimals. */
export function loadAverage(): number[] {
  return loadavg().map((value) => Math.round(value * 100) / 100);
}

/** Everything but the end-of-run load, which {@link finishEnvironment} adds. */
export async function describeEnvironment(kubernetesVersion: string, cwd: string): Promise<RunEnvironment> {
  return {
    machine: {
      cores: cpus().length,
      cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
      memory_mb: Math.round(totalmem() / 2 ** 20),
    },
    load_average: { start: loadAverage(), end: [] },
    node_version: process.version,
    kubernetes_version: kubernetesVersion,
    git_commit: await gitCommit(cwd),
    started_at: new Date().toISOString(),
  };
}

/** The environment with the load average at the end of the run. */
export function finishEnvironment(environment: RunEnvironment): RunEnvironment {
  return { ...environment, load_average: { ...environment.load_average, end: loadAverage() } };
}
