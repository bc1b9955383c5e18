#!/usr/bin/env node
/**
 * What per-volume usage costs, without a cluster: a walk of one volume of `--files` files (100
 * directories of equal share, one hard link per directory) by safe-fs's `scanVolumeUsage` at full
 * speed, `--rounds` times: this process's CPU, the system calls made and the wall time, per 100 000
 * files; and the memory one more volume holds in a `UsageMonitor`'s gauges (`--volumes` volumes
 * measured once, heap and RSS after a forced collection, before and after). On the temporary
 * directory's file system; the page cache is warm after the first round.
 *
 *   npm exec -- node --expose-gc --conditions=@kube-provisioner/source packages/bench/src/usage-cost.ts \
 *     [--files 100000] [--rounds 3] [--volumes 10000]
 */
import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { type MeasuredVolume, UsageMonitor } from '@kube-provisioner/controller/usage';
import { parseRelativeVolumePath, scanVolumeUsage } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { forEachConcurrently } from './concurrency.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    volumes: { type: 'string', default: '10000' },
  },
});
const files = Number(values.files);
const rounds = Number(values.rounds);
const volumeCount = Number(values.volumes);
for (const [name, value] of [
  ['files', files],
  ['rounds', rounds],
  ['volumes', volumeCount],
] as const) {
  if (!(Number.isInteger(value) && value >= 1)) throw new Error(`--${name} must be a positive integer`);
}
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('run with node --expose-gc');

const base = await mkdtemp(join(tmpdir(), 'usage-cost-'));
try {
  const volume = join(base, 'volume');
  const directories = 100;
  await mkdir(volume);
  await forEachConcurrently(
    Array.from({ length: directories }, (_, index) => index),
    8,
    async (directory) => {
      const dir = join(volume, `d${directory}`);
      await mkdir(dir);
      for (let file = 0; file < files / directories; file++) await writeFile(join(dir, `f${file}`), 'x');
      await link(join(dir, 'f0'), join(dir, 'hard'));
    },
  );
  const per100k = (value: number, usage: { inodes: number }) => (value * 100_000) / usage.inodes;
  for (let round = 1; round <= rounds; round++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const usage = await scanVolumeUsage(base, parseRelativeVolumePath('volume'));
    const wallMs = performance.now() - start;
    const { user, system } = process.cpuUsage(cpu);
    if (usage === undefined) throw new Error('the volume vanished');
    process.stdout.write(
      `walk round ${round}: ${usage.inodes} inodes, per 100 000: CPU ${per100k((user + system) / 1000, usage).toFixed(0)} ms ` +
        `(user ${per100k(user / 1000, usage).toFixed(0)}), ${per100k(usage.operations, usage).toFixed(0)} system calls, ` +
        `wall ${per100k(wallMs, usage).toFixed(0)} ms\n`,
    );
  }

  const registry = new Registry();
  const monitor = new UsageMonitor<MeasuredVolume>({
    registry,
    measure: async () => ({ bytes: 4096, inodes: 1 }),
    operationsPerSecond: 1_000_000,
    scanTimeoutMs: 60_000,
    onExceeded: () => {},
  });
  const volumes: MeasuredVolume[] = Array.from({ length: volumeCount }, (_, index) => ({
    pvName: `pvc-${index.toString().padStart(8, '0')}-0000-0000-0000-000000000000`,
    namespace: `team-${index % 100}`,
    claimName: `claim-${index}`,
    claimUid: undefined,
    requestedBytes: 2 ** 30,
  }));
  collect();
  const before = process.memoryUsage();
  await monitor.refresh(volumes, new AbortController().signal, silentLogger);
  collect();
  const after = process.memoryUsage();
  process.stdout.write(
    `monitor: ${volumeCount} volumes measured once hold ${((after.heapUsed - before.heapUsed) / volumeCount).toFixed(0)} B ` +
      `of heap each (RSS ${((after.rss - before.rss) / volumeCount).toFixed(0)} B)\n`,
  );
} finally {
  await rm(base, { recursive: true, force: true });
}
