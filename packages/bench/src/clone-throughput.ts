#!/usr/bin/env node
/**
 * How fast safe-fs clones a volume against `cp -a` of the same tree, without a cluster: a source
 * volume of `--files` files in `--directories` directories totalling about `--megabytes` MB (mixed
 * sizes: per hundred files one large, nine medium, ninety small, weighted 200 : 20 : 1) is copied
 * `--rounds` times by each, alternating, into the same directory (`--dir`, default the temporary
 * directory's file system). As root the page cache is dropped (after a `sync`) before every copy, so
 * each reads from the disk; otherwise the cache is warm and the report says so. Each copy's wall time
 * is taken alone and with the `sync` that writes it back, since neither copier flushes its data.
 * Reported, never asserted.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/clone-throughput.ts \
 *     [--files 10000] [--directories 100] [--megabytes 200] [--rounds 3] [--dir <path>] [--out <file.json>]
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { parseRelativeVolumePath, type VolumeOwner, VolumeRoot } from '@kube-provisioner/safe-fs';
import { positiveInteger } from './bench-options.ts';
import { median } from './compare-table.ts';
import { forEachConcurrently } from './concurrency.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    directories: { type: 'string', default: '100' },
    megabytes: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    dir: { type: 'string', default: tmpdir() },
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

/** Which copier. */
type Copier = 'safe-fs' | 'cp -a';

interface CopyRun {
  readonly copier: Copier;
  readonly round: number;
  /** The copy alone. */
  readonly wallMs: number;
  /** The copy and the `sync` that writes it to the disk. */
  readonly syncedMs: number;
}

/** Size of file `index`: one in a hundred large, nine medium, the rest small, scaled to the total. */
function sizes(): number[] {
  const weight = (index: number): number => (index % 100 === 0 ? 200 : index % 10 === 0 ? 20 : 1);
  const weights = Array.from({ length: files }, (_, index) => weight(index));
  const unit = (megabytes * 1e6) / weights.reduce((sum, w) => sum + w, 0);
  return weights.map((w) => Math.round(w * unit));
}

const owner = (name: string): VolumeOwner => ({
  claimUid: `uid-${name}`,
  namespace: 'bench',
  claimName: name,
  pvName: `pvc-${name}`,
  provisioner: 'clone-throughput.kube-provisioner.io/bench',
});

/** Empties the page cache after writing dirty data back; `false` when not allowed (not root). */
async function dropCaches(): Promise<boolean> {
  await run('sync');
  return writeFile('/proc/sys/vm/drop_caches', '3').then(
    () => true,
    () => false,
  );
}

async function timed(copy: () => Promise<void>): Promise<{ wallMs: number; syncedMs: number }> {
  const start = performance.now();
  await copy();
  const wallMs = performance.now() - start;
  await run('sync');
  return { wallMs, syncedMs: performance.now() - start };
}

const base = await mkdtemp(join(values.dir, 'clone-throughput-'));
try {
  const root = new VolumeRoot(base);
  const source = parseRelativeVolumePath('source');
  await root.createVolume(source, { owner: owner('source'), mode: 0o755 });
  const data = randomBytes(Math.max(...sizes()));
  const fileSizes = sizes();
  await forEachConcurrently(
    Array.from({ length: directories }, (_, index) => index),
    8,
    async (directory) => {
      const dir = join(base, 'source', `d${directory}`);
      await mkdir(dir);
      for (let index = directory; index < files; index += directories) {
        await writeFile(join(dir, `f${index}`), data.subarray(0, fileSizes[index]));
      }
    },
  );
  const totalBytes = fileSizes.reduce((sum, size) => sum + size, 0);
  log(`source: ${files} files in ${directories} directories, ${(totalBytes / 1e6).toFixed(0)} MB in ${base}`);
  const runs: CopyRun[] = [];
  let cache: 'dropped' | 'warm' = 'dropped';
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so neither always meets the other's writeback.
    const order: readonly Copier[] = round % 2 === 1 ? ['safe-fs', 'cp -a'] : ['cp -a', 'safe-fs'];
    for (const copier of order) {
      if (!(await dropCaches())) cache = 'warm';
      const name = `copy-${copier === 'safe-fs' ? 'ours' : 'cp'}-${round}`;
      const { wallMs, syncedMs } = await timed(async () => {
        if (copier === 'safe-fs') {
          await root.cloneVolume(source, parseRelativeVolumePath(name), {
            owner: owner(name),
            mode: 0o755,
            sourcePvName: 'pvc-source',
          });
        } else await run('cp', ['-a', join(base, 'source'), join(base, name)]);
      });
      runs.push({ copier, round, wallMs: Math.round(wallMs), syncedMs: Math.round(syncedMs) });
      log(`round ${round}, ${copier}: ${Math.round(wallMs)} ms, ${Math.round(syncedMs)} ms with sync`);
      await rm(join(base, name), { recursive: true, force: true });
    }
  }
  const summary = (copier: Copier) => {
    const of = runs.filter((r) => r.copier === copier);
    const rate = (ms: number) => ({
      mbPerS: Number((totalBytes / 1e6 / (ms / 1000)).toFixed(1)),
      filesPerS: Math.round(files / (ms / 1000)),
    });
    return {
      copy: rate(median(of.map((r) => r.wallMs))),
      withSync: rate(median(of.map((r) => r.syncedMs))),
    };
  };
  const ours = summary('safe-fs');
  const cp = summary('cp -a');
  const ratio = {
    copy: Number((ours.copy.mbPerS / cp.copy.mbPerS).toFixed(2)),
    withSync: Number((ours.withSync.mbPerS / cp.withSync.mbPerS).toFixed(2)),
  };
  process.stdout.write(
    `page cache ${cache}; medians of ${rounds} rounds\n` +
      `safe-fs clone: ${ours.copy.mbPerS} MB/s, ${ours.copy.filesPerS} files/s (with sync ${ours.withSync.mbPerS} MB/s)\n` +
      `cp -a:         ${cp.copy.mbPerS} MB/s, ${cp.copy.filesPerS} files/s (with sync ${cp.withSync.mbPerS} MB/s)\n` +
      `safe-fs ÷ cp -a: ${ratio.copy} (with sync ${ratio.withSync})\n`,
  );
  if (values.out !== undefined) {
    await mkdir(dirname(values.out), { recursive: true });
    const tree = { files, directories, megabytes: Number((totalBytes / 1e6).toFixed(1)) };
    const report = { tree, dir: values.dir, cache, rounds, safeFs: ours, cpA: cp, ratio, runs };
    await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
} finally {
  await rm(base, { recursive: true, force: true });
}
