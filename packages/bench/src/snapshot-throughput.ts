#!/usr/bin/env node
/**
 * How fast, and at what cost in space, safe-fs takes a snapshot of a volume and restores one, against
 * `cp -a` and `cp -a --reflink=always` of the same tree on the same file system, without a cluster. A
 * snapshot is `VolumeRoot.cloneVolume` into the snapshot area (what the snapshot taker runs), a restore
 * the same from a snapshot into a new volume; both share file extents where the file system can
 * (`reflink: 'auto'`), and `safe-fs, bytes` is the snapshot with `reflink: 'never'`, the copy every
 * file system gets otherwise. The tree: `--files` files in `--directories` directories, about
 * `--megabytes` MB (per hundred files one large, nine medium, ninety small, weighted 200 : 20 : 1, as
 * clone-throughput.ts). Each file system (`--dir`, repeatable, default the temporary directory; with
 * `--xfs-loop` also an XFS `reflink=1` file system made on a loop device in the temporary directory,
 * root only) gets `--rounds` copies by each copier, the order rotated per round, the page cache
 * dropped before each (as root). Space: free bytes (`statfs`) after the `sync` that follows the copy,
 * against before it (other writers to a shared disk move it: only the loop file system is private),
 * and the blocks the copy's files hold (`du`, which counts shared blocks in full). A copier the file system refuses (`--reflink=always` without reflinks) is
 * reported unsupported. Reported, never asserted.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/snapshot-throughput.ts \
 *     [--files 2000] [--directories 40] [--megabytes 200] [--rounds 3] [--dir <path>]... [--xfs-loop] \
 *     [--out <file.json>]
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import {
  parseRelativeVolumePath,
  type RelativeVolumePath,
  snapshotPath,
  type VolumeOwner,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import { positiveInteger } from './bench-options.ts';
import { median } from './compare-table.ts';
import { forEachConcurrently } from './concurrency.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    directories: { type: 'string', default: '40' },
    megabytes: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    dir: { type: 'string', multiple: true },
    'xfs-loop': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const files = positiveInteger('files', values.files);
const directories = positiveInteger('directories', values.directories);
const megabytes = positiveInteger('megabytes', values.megabytes);
const rounds = positiveInteger('rounds', values.rounds);
const run = promisify(execFile);
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Which copy: our snapshot, our restore, our snapshot without sharing, or `cp`. */
type Copier = 'safe-fs snapshot' | 'safe-fs restore' | 'safe-fs, bytes' | 'cp -a' | 'cp -a --reflink=always';
const copiers: readonly Copier[] = [
  'safe-fs snapshot',
  'safe-fs restore',
  'safe-fs, bytes',
  'cp -a',
  'cp -a --reflink=always',
];

interface CopyRun {
  readonly copier: Copier;
  readonly round: number;
  readonly wallMs: number;
  /** The copy and the `sync` that writes it back. */
  readonly syncedMs: number;
  /** Free space the copy took, after that `sync`: what sharing saves, exact only on a private file system. */
  readonly spaceBytes: number;
  /** Blocks the copy's files hold (`du`), shared ones counted in full: the same for a clone as for a copy. */
  readonly allocatedBytes: number;
}

/** Medians of one copier on one file system, or why it did not run. */
type CopierSummary =
  | {
      readonly supported: true;
      readonly mbPerS: number;
      readonly filesPerS: number;
      readonly mbPerSWithSync: number;
      readonly spaceMb: number;
      readonly allocatedMb: number;
    }
  | { readonly supported: false; readonly error: string };

/** Size of file `index`: one in a hundred large, nine medium, the rest small, scaled to the total. */
function sizes(): number[] {
  const weight = (index: number): number => (index % 100 === 0 ? 200 : index % 10 === 0 ? 20 : 1);
  const weights = Array.from({ length: files }, (_, index) => weight(index));
  const unit = (megabytes * 1e6) / weights.reduce((sum, w) => sum + w, 0);
  return weights.map((w) => Math.round(w * unit));
}
const fileSizes = sizes();
const totalBytes = fileSizes.reduce((sum, size) => sum + size, 0);

const owner = (name: string): VolumeOwner => ({
  claimUid: `uid-${name}`,
  namespace: 'bench',
  claimName: name,
  pvName: `pvc-${name}`,
  provisioner: 'snapshot-throughput.kube-provisioner.io/bench',
});

/** Empties the page cache after writing dirty data back; `false` when not allowed (not root). */
async function dropCaches(): Promise<boolean> {
  await run('sync');
  return writeFile('/proc/sys/vm/drop_caches', '3').then(
    () => true,
    () => false,
  );
}

function freeBytes(path: string): number {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
}

async function fileSystemType(path: string): Promise<string> {
  const [, type] = (await run('df', ['--output=fstype', path])).stdout.trim().split('\n');
  return type?.trim() ?? 'unknown';
}

/** Writes the source tree (random data: nothing compresses or deduplicates it) into `dir`. */
async function writeTree(dir: string): Promise<void> {
  const data = randomBytes(Math.max(...fileSizes));
  await forEachConcurrently(
    Array.from({ length: directories }, (_, index) => index),
    8,
    async (directory) => {
      const sub = join(dir, `d${directory}`);
      await mkdir(sub);
      for (let index = directory; index < files; index += directories) {
        await writeFile(join(sub, `f${index}`), data.subarray(0, fileSizes[index]));
      }
    },
  );
}

/** The copies of one file system, in `base` (made, and removed after). */
async function measure(
  base: string,
): Promise<{ runs: CopyRun[]; errors: Map<Copier, string>; cache: string }> {
  const root = new VolumeRoot(base);
  const source = parseRelativeVolumePath('source');
  await root.createVolume(source, { owner: owner('source'), mode: 0o755 });
  await writeTree(join(base, 'source'));
  // The snapshot every restore copies from, taken once.
  const kept = snapshotPath('bench', 'kept');
  await root.cloneVolume(source, kept, { owner: owner('kept'), mode: 0o755, sourcePvName: 'pvc-source' });
  const copy = async (copier: Copier, name: string): Promise<string> => {
    const snapshot = (): RelativeVolumePath => snapshotPath('bench', name);
    const target =
      copier === 'safe-fs snapshot' || copier === 'safe-fs, bytes'
        ? snapshot()
        : parseRelativeVolumePath(name);
    if (copier === 'safe-fs snapshot' || copier === 'safe-fs, bytes') {
      const reflink = copier === 'safe-fs snapshot' ? 'auto' : 'never';
      await root.cloneVolume(source, target, {
        owner: owner(name),
        mode: 0o755,
        sourcePvName: 'pvc-source',
        reflink,
      });
    } else if (copier === 'safe-fs restore') {
      await root.cloneVolume(kept, target, { owner: owner(name), mode: 0o755, sourcePvName: 'pvc-kept' });
    } else {
      const reflink = copier === 'cp -a' ? [] : ['--reflink=always'];
      await run('cp', ['-a', ...reflink, join(base, 'source'), join(base, target)]);
    }
    return join(base, target);
  };
  const runs: CopyRun[] = [];
  const errors = new Map<Copier, string>();
  let cache = 'dropped';
  for (let round = 1; round <= rounds; round++) {
    // Rotated, so no copier always meets another's writeback.
    const order = copiers.map((_, index) => copiers[(index + round - 1) % copiers.length] as Copier);
    for (const copier of order) {
      if (errors.has(copier)) continue;
      if (!(await dropCaches())) cache = 'warm';
      const name = `${copier.replace(/[^a-z]+/g, '-')}-${round}`;
      const free = freeBytes(base);
      const start = performance.now();
      let made: string;
      try {
        made = await copy(copier, name);
      } catch (err) {
        // Its first complaint: cp makes one per file.
        const [first = ''] = String((err as { stderr?: string }).stderr || err)
          .trim()
          .split('\n');
        errors.set(copier, first);
        log(`${copier}: unsupported here (${errors.get(copier)})`);
        await rm(join(base, name), { recursive: true, force: true });
        continue;
      }
      const wallMs = performance.now() - start;
      await run('sync');
      const syncedMs = performance.now() - start;
      const spaceBytes = free - freeBytes(base);
      const allocatedBytes = Number((await run('du', ['-s', '-B1', made])).stdout.split('\t')[0]);
      runs.push({
        copier,
        round,
        wallMs: Math.round(wallMs),
        syncedMs: Math.round(syncedMs),
        spaceBytes,
        allocatedBytes,
      });
      log(
        `round ${round}, ${copier}: ${Math.round(wallMs)} ms (${Math.round(syncedMs)} with sync), ${(spaceBytes / 1e6).toFixed(1)} MB`,
      );
      await rm(made, { recursive: true, force: true });
    }
  }
  return { runs, errors, cache };
}

function summarize(
  runs: readonly CopyRun[],
  errors: ReadonlyMap<Copier, string>,
): Record<Copier, CopierSummary> {
  const entries = copiers.map((copier): [Copier, CopierSummary] => {
    const error = errors.get(copier);
    if (error !== undefined) return [copier, { supported: false, error }];
    const of = runs.filter((r) => r.copier === copier);
    const seconds = median(of.map((r) => r.wallMs)) / 1000;
    return [
      copier,
      {
        supported: true,
        mbPerS: Number((totalBytes / 1e6 / seconds).toFixed(1)),
        filesPerS: Math.round(files / seconds),
        mbPerSWithSync: Number((totalBytes / 1e6 / (median(of.map((r) => r.syncedMs)) / 1000)).toFixed(1)),
        spaceMb: Number((median(of.map((r) => r.spaceBytes)) / 1e6).toFixed(1)),
        allocatedMb: Number((median(of.map((r) => r.allocatedBytes)) / 1e6).toFixed(1)),
      },
    ];
  });
  return Object.fromEntries(entries) as Record<Copier, CopierSummary>;
}

/** Our snapshot's MB/s over each `cp`'s, where both ran. */
function ratios(summary: Record<Copier, CopierSummary>): Record<string, number | null> {
  const ours = summary['safe-fs snapshot'];
  const over = (copier: Copier): number | null => {
    const theirs = summary[copier];
    return ours.supported && theirs.supported ? Number((ours.mbPerS / theirs.mbPerS).toFixed(2)) : null;
  };
  return {
    'snapshot / cp -a': over('cp -a'),
    'snapshot / cp -a --reflink=always': over('cp -a --reflink=always'),
  };
}

/** An XFS file system with `reflink=1` on a loop device, sized for the tree and a copy of it. */
async function mountXfsLoop(): Promise<{ path: string; unmount: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-throughput-xfs-'));
  const image = join(dir, 'xfs.img');
  const path = join(dir, 'mnt');
  await run('truncate', ['-s', `${Math.max(1024, megabytes * 5)}M`, image]);
  await run('mkfs.xfs', ['-q', '-m', 'reflink=1', image]);
  await mkdir(path);
  await run('mount', ['-o', 'loop', image, path]);
  return {
    path,
    unmount: async () => {
      await run('umount', [path]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const fileSystems = [];
const dirs = values.dir ?? [tmpdir()];
const xfs = values['xfs-loop'] ? await mountXfsLoop() : undefined;
try {
  for (const dir of [...dirs, ...(xfs === undefined ? [] : [xfs.path])]) {
    const type = await fileSystemType(dir);
    const label =
      dir === xfs?.path ? `xfs reflink=1 (loop device, image in ${tmpdir()})` : `${type} (${dir})`;
    log(`${label}: ${files} files in ${directories} directories, ${(totalBytes / 1e6).toFixed(0)} MB`);
    const base = await mkdtemp(join(dir, 'snapshot-throughput-'));
    try {
      const { runs, errors, cache } = await measure(base);
      const summary = summarize(runs, errors);
      fileSystems.push({ label, type, cache, copiers: summary, ratio: ratios(summary), runs });
      for (const [copier, result] of Object.entries(summary)) {
        log(
          result.supported
            ? `  ${copier}: ${result.mbPerS} MB/s, ${result.filesPerS} files/s (with sync ${result.mbPerSWithSync} MB/s), ${result.spaceMb} MB of space, ${result.allocatedMb} MB allocated`
            : `  ${copier}: unsupported`,
        );
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }
} finally {
  await xfs?.unmount();
}
process.stdout.write(
  `${JSON.stringify(
    fileSystems.map(({ label, ratio }) => ({ label, ratio })),
    null,
    2,
  )}\n`,
);
if (values.out !== undefined) {
  await mkdir(dirname(values.out), { recursive: true });
  const tree = { files, directories, megabytes: Number((totalBytes / 1e6).toFixed(1)) };
  await writeFile(values.out, `${JSON.stringify({ tree, rounds, fileSystems }, null, 2)}\n`);
}
