// A walk of a tree as deep as a workload makes it keeps a little state for every level it is in
// (what reopening a level closed for depth needs): that state must stay small, since a tenant sets
// the depth. Measured as the live heap after a full collection, sampled from inside the walk's own
// calls while it is at the bottom of the tree.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FsOps, parseRelativeVolumePath, scanVolumeUsage, VolumeRoot } from '../src/index.ts';
import { heapSampling, nestDirectories, scratchDirectory } from './support/walk-probes.ts';

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
  const base = await scratchDirectory();
  made.push(base);
  mkdirSync(join(base, 'ns-deep'));
  closeSync(nestDirectories(join(base, 'ns-deep'), depth));
  return base;
}

function sampling(): { readonly fs: FsOps; perLevel(): number } {
  const { fs, growth } = heapSampling(sampleEvery);
  return { fs, perLevel: () => growth() / depth };
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
