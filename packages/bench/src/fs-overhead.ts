#!/usr/bin/env node
/**
 * safe-fs's own cost per volume create, by call table: `nodeFsOps` (libuv's thread pool) and
 * `localFsOps` (the event loop's thread, `fdatasync` on the pool), in the same process, rounds
 * alternating, 4 creates in flight like the provisioner's workers, on a fresh directory under the
 * temporary directory. Reports creates/s, this process's CPU per create (and its user-space part,
 * which the disk's journal does not blur) and the event loop's delay. With `--after-deleting M`,
 * each round first creates M volumes there and removes them again, as a bench round's deletions
 * precede the next round's creates (ext4 without a journal then costs more: `volume-file-system.ts`).
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/fs-overhead.ts \
 *     [--creates 400] [--rounds 4] [--after-deleting 0]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  type FsOps,
  localFsOps,
  nodeFsOps,
  parseRelativeVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import { provisionerWorkers } from './ceiling.ts';
import { median } from './compare-table.ts';
import { forEachConcurrently } from './concurrency.ts';

interface Round {
  readonly createsPerS: number;
  readonly cpuMsPerCreate: number;
  /** The user-space part: the JavaScript and Node's bindings, without the kernel's file system work. */
  readonly userMsPerCreate: number;
  readonly loopDelayP99Ms: number;
}

/** How many namespace directories the volumes of a round are spread over. */
const namespaces = 10;

/** Creates `creates` volumes `<prefix>-<i>` in the namespace directories of `root`, 4 at a time. */
async function createVolumes(root: VolumeRoot, prefix: string, creates: number): Promise<void> {
  const indices = Array.from({ length: creates }, (_, index) => index);
  await forEachConcurrently(indices, provisionerWorkers, async (index) => {
    const owner = {
      claimUid: `${prefix}${index}`,
      namespace: 'bench',
      claimName: `c${index}`,
      pvName: `pv${index}`,
      provisioner: 'bench',
    };
    await root.createVolume(parseRelativeVolumePath(`ns-${index % namespaces}/${prefix}-${index}`), {
      owner,
      mode: 0o777,
    });
  });
}

/**
 * One round on a fresh directory under `parent`, left in place: removing it here would make the
 * next round's creates follow that many deletions.
 */
async function round(parent: string, fs: FsOps, creates: number, deleteFirst: number): Promise<Round> {
  const base = mkdtempSync(join(parent, 'round-'));
  const root = new VolumeRoot(base, { fs });
  if (deleteFirst > 0) {
    await createVolumes(root, 'deleted', deleteFirst);
    for (let index = 0; index < namespaces; index++) rmSync(join(base, `ns-${index}`), { recursive: true });
  }
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await createVolumes(root, 'pvc', creates);
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  delay.disable();
  return {
    createsPerS: (creates / wallMs) * 1000,
    cpuMsPerCreate: (used.user + used.system) / 1000 / creates,
    userMsPerCreate: used.user / 1000 / creates,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
  };
}

const { values } = parseArgs({
  options: { creates: { type: 'string' }, rounds: { type: 'string' }, 'after-deleting': { type: 'string' } },
});
const creates = Number(values.creates ?? 400);
const rounds = Number(values.rounds ?? 4);
const afterDeleting = Number(values['after-deleting'] ?? 0);
const tables = { 'thread pool (nodeFsOps)': nodeFsOps, 'event loop (localFsOps)': localFsOps };
const results = new Map<string, Round[]>(Object.keys(tables).map((name) => [name, []]));
const parent = mkdtempSync(join(tmpdir(), 'fs-overhead-'));
try {
  await round(parent, localFsOps, 50, 0);
  for (let index = 0; index < rounds; index++) {
    const order = Object.entries(tables);
    if (index % 2 === 1) order.reverse();
    for (const [name, fs] of order) results.get(name)?.push(await round(parent, fs, creates, afterDeleting));
  }
} finally {
  rmSync(parent, { recursive: true, force: true });
}
process.stdout.write(
  `${creates} creates x ${rounds} rounds, ${provisionerWorkers} in flight, ` +
    `${afterDeleting} volumes removed before each round, medians\n`,
);
for (const [name, list] of results) {
  const of = (pick: (round: Round) => number) => median(list.map(pick)).toFixed(2);
  process.stdout.write(
    `${name}: ${of((r) => r.createsPerS)} creates/s, ${of((r) => r.cpuMsPerCreate)} ms CPU per create (user ${of((r) => r.userMsPerCreate)}), event loop delay p99 ${of((r) => r.loopDelayP99Ms)} ms\n`,
  );
}
