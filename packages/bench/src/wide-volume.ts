#!/usr/bin/env node
/**
 * What the walks of a volume cost in memory when a workload makes it as wide or as deep as it likes,
 * without a cluster: a volume of `--entries` empty files in one directory and a volume one directory
 * `--depth` levels deep, each usage-scanned, cloned, and deleted (the clone, then the volume) by
 * safe-fs, each walk in a child process of its own, bundled and run as the image runs it (its Node.js
 * flags, and `--max-old-space-size=<--heap-mib>`; `wide-volume-walk.ts`). Reports per walk its time
 * (measured in the child), the child's RSS before the walk and at its peak (`VmHWM` of
 * `/proc/<pid>/status`, read by the parent while it runs and by the child at its end), against the
 * manifests' memory limit (256Mi when measured; 384Mi now). The volumes are made in `--dir` (default `/dev/shm`, so the file
 * system's own cost stays out of the figures) and removed afterwards. Not a scenario of `npm run
 * bench`: it needs no cluster, and takes minutes.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/wide-volume.ts \
 *     [--entries 1000000] [--depth 100000] [--heap-mib 128] [--dir /dev/shm] [--out report.json]
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseRelativeVolumePath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { bundleProgram } from '@kube-provisioner/testenv/internal';
import { imageNodeFlags } from './ours-program.ts';
import { parseStatus } from './proc-stats.ts';
import { ownerOf, type Walk, walks } from './wide-volume-walk.ts';

/** One walk's figures. */
interface WalkResult {
  readonly volume: string;
  readonly walk: Walk;
  /** Wall time of the walk itself, without the child's start-up; `undefined` when it failed. */
  readonly ms: number | undefined;
  /** The child's RSS once loaded, right before the walk; `undefined` when it failed. */
  readonly startRssMib: number | undefined;
  readonly peakRssMib: number;
  /** What the walk returned, or why it failed (the child's exit and last lines of stderr). */
  readonly outcome: string;
}

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    depth: { type: 'string', default: '100000' },
    'heap-mib': { type: 'string', default: '128' },
    dir: { type: 'string' },
    out: { type: 'string' },
  },
});

const chartLimitMib = 256;

async function peakRssMib(pid: number): Promise<number | undefined> {
  try {
    return parseStatus(await readFile(`/proc/${pid}/status`, 'utf8')).peakRssMb;
  } catch {
    return undefined;
  }
}

/** Runs `walk` in a child process of `script` under `flags`, sampling its peak RSS from outside. */
async function inChild(
  script: string,
  flags: readonly string[],
  walk: Walk,
  base: string,
  volume: string,
): Promise<WalkResult> {
  const child = spawn(process.execPath, [...flags, script, walk, base, volume], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  let peak = 0;
  const sampler = setInterval(() => {
    if (child.pid === undefined) return;
    void peakRssMib(child.pid).then((mib) => {
      peak = Math.max(peak, mib ?? 0);
    });
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  const line = stdout.trim().split('\n').pop() ?? '';
  if (code === 0 && line.startsWith('{')) {
    const reported = JSON.parse(line) as {
      ms: number;
      outcome: string;
      startRssMib: number;
      peakRssMib: number;
    };
    return { volume, walk, ...reported, peakRssMib: Math.max(peak, reported.peakRssMib) };
  }
  const lines = stderr.trim().split('\n');
  const last = lines.find((text) => /Error|error:/u.test(text)) ?? lines.slice(-3).join(' | ');
  return {
    volume,
    walk,
    ms: undefined,
    startRssMib: undefined,
    peakRssMib: peak,
    outcome: `failed (exit ${code}): ${last}`,
  };
}

/** Volume `ns/<name>` of `base` with `entries` empty files in its top directory. */
async function wideVolume(root: VolumeRoot, base: string, name: string, entries: number): Promise<void> {
  await root.createVolume(parseRelativeVolumePath(`ns/${name}`), { owner: ownerOf(name), mode: 0o777 });
  const dir = join(base, 'ns', name);
  for (let index = 0; index < entries; index++) {
    closeSync(openSync(join(dir, `file-${index}`), constants.O_CREAT | constants.O_WRONLY, 0o644));
  }
}

/**
 * Volume `ns/<name>` of `base` holding one chain of `depth` directories `d/d/…`: made by relative
 * `mkdir` from the working directory, since its paths pass `PATH_MAX` long before the bottom.
 */
async function deepVolume(root: VolumeRoot, base: string, name: string, depth: number): Promise<void> {
  await root.createVolume(parseRelativeVolumePath(`ns/${name}`), { owner: ownerOf(name), mode: 0o777 });
  const cwd = process.cwd();
  try {
    process.chdir(join(base, 'ns', name));
    for (let level = 0; level < depth; level++) {
      mkdirSync('d');
      process.chdir('d');
    }
  } finally {
    process.chdir(cwd);
  }
}

function table(results: readonly WalkResult[], flags: readonly string[]): string {
  const rows = results.map((result) => [
    result.volume,
    result.walk,
    result.ms === undefined ? '-' : `${(result.ms / 1000).toFixed(1)} s`,
    result.startRssMib === undefined ? '-' : `${result.startRssMib.toFixed(0)} MiB`,
    `${result.peakRssMib.toFixed(0)} MiB`,
    result.outcome,
  ]);
  const header = ['VOLUME', 'WALK', 'TIME', 'RSS BEFORE', 'PEAK RSS', 'OUTCOME'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [
    `each walk in a bundled child with ${flags.join(' ')}; chart limit ${chartLimitMib} MiB`,
    line(header),
    ...rows.map(line),
  ].join('\n');
}

async function main(): Promise<void> {
  const numbers = {
    entries: Number(values.entries),
    depth: Number(values.depth),
    heapMib: Number(values['heap-mib']),
  };
  for (const [name, value] of Object.entries(numbers)) {
    if (!(Number.isInteger(value) && value >= 1)) throw new Error(`--${name} must be a positive integer`);
  }
  const flags = [...imageNodeFlags, `--max-old-space-size=${numbers.heapMib}`];
  const dir = values.dir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  const bundleDir = await mkdtemp(join(tmpdir(), 'wide-volume-bundle-'));
  const base = await mkdtemp(join(dir, 'wide-volume-'));
  const results: WalkResult[] = [];
  try {
    const { outfile } = await bundleProgram({
      entry: join(import.meta.dirname, 'wide-volume-walk.ts'),
      outfile: join(bundleDir, 'wide-volume-walk.mjs'),
    });
    const root = new VolumeRoot(base);
    const volumes = [
      {
        name: 'wide',
        make: () => wideVolume(root, base, 'wide', numbers.entries),
        size: `${numbers.entries} files`,
      },
      {
        name: 'deep',
        make: () => deepVolume(root, base, 'deep', numbers.depth),
        size: `${numbers.depth} levels`,
      },
    ];
    // One volume at a time, so that the file system holds at most it and its clone.
    for (const volume of volumes) {
      const start = performance.now();
      await volume.make();
      const seconds = ((performance.now() - start) / 1000).toFixed(1);
      process.stderr.write(`made ns/${volume.name} (${volume.size}) in ${seconds} s\n`);
      for (const walk of walks) {
        const result = await inChild(outfile, flags, walk, base, volume.name);
        process.stderr.write(`${walk} ${volume.name}: ${JSON.stringify(result)}\n`);
        results.push(result);
      }
    }
  } finally {
    // coreutils' rm walks a tree of any depth; what a failed walk left is removed with it.
    execFileSync('rm', ['-rf', base]);
    await rm(bundleDir, { recursive: true, force: true });
  }
  process.stdout.write(`${table(results, flags)}\n`);
  if (values.out !== undefined) {
    const report = { ...numbers, nodeFlags: flags, chartLimitMib, results };
    await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
}

await main();
