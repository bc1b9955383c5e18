// A walk of a tree as deep as a workload makes it keeps a little state for every level it is in
// (what reopening a level closed for depth needs): that state must stay small, since a tenant sets
// the depth. Measured as the live heap after a full collection, sampled from inside the walk's own
// calls while it is at the bottom of the tree.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FsOps,
  localFsOps,
  parseRelativeVolumePath,
  scanVolumeUsage,
  VolumeRoot,
} from '../src/index.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const depth = 20_000;
const sampleEvery = 2_000;
// What a level keeps: its identity (device, inode), name, position and the walk's own state. A
// whole `Stats` kept instead took ~590 bytes a level.
const boundPerLevel = 450;

const made: string[] = [];
afterEach(() => {
  // `rm` walks by descriptor; Node.js's recursive removal fails on paths past PATH_MAX.
  for (const dir of made.splice(0)) execFileSync('rm', ['-rf', dir]);
});

/** A base with volume `ns-deep` nesting {@link depth} directories `d`, made through descriptors. */
async function deepVolume(): Promise<string> {
  const base = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'safe-fs-'));
  made.push(base);
  mkdirSync(join(base, 'ns-deep'));
  let fd = openSync(join(base, 'ns-deep'), constants.O_DIRECTORY);
  for (let level = 0; level < depth; level++) {
    mkdirSync(`/proc/self/fd/${fd}/d`);
    const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_DIRECTORY);
    closeSync(fd);
    fd = next;
  }
  closeSync(fd);
  return base;
}

/** `localFsOps` recording the largest live heap seen every {@link sampleEvery} `lstat` calls. */
function sampling(): { readonly fs: FsOps; perLevel(): number } {
  collectGarbage();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let calls = 0;
  return {
    fs: {
      ...localFsOps,
      lstat: (path) => {
        if (++calls % sampleEvery === 0) {
          collectGarbage();
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        }
        return localFsOps.lstat(path);
      },
    },
    perLevel: () => (peak - baseline) / depth,
  };
}

describe(`walks of a tree ${depth} levels deep`, () => {
  it('measure usage keeping a few hundred bytes a level', { timeout: 120_000 }, async () => {
    const base = await deepVolume();
    const { fs, perLevel } = sampling();
    const usage = await scanVolumeUsage(base, parseRelativeVolumePath('ns-deep'), { fs });
    expect(usage?.inodes).toBe(depth + 1);
    expect(perLevel()).toBeLessThan(boundPerLevel);
  });

  it('delete keeping a few hundred bytes a level', { timeout: 120_000 }, async () => {
    const base = await deepVolume();
    const { fs, perLevel } = sampling();
    const root = new VolumeRoot(base, { fs });
    await expect(root.deleteVolume(parseRelativeVolumePath('ns-deep'), { pvName: 'pv-deep' })).resolves.toBe(
      'deleted',
    );
    expect(perLevel()).toBeLessThan(boundPerLevel);
  });
});
