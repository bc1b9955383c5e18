// A workload may nest directories thousands of levels deep: the walks hold a bounded number of
// descriptors and make a bounded number of system calls per level, so their cost grows with the tree.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, scanVolumeUsage, VolumeRoot } from '../src/index.ts';
import { callCounting, nestDirectories, scratchDirectory, touch } from './support/walk-probes.ts';

const made: string[] = [];
afterEach(() => {
  // `rm` walks by descriptor; Node.js's recursive removal fails on paths past PATH_MAX.
  for (const dir of made.splice(0)) execFileSync('rm', ['-rf', dir]);
});

/** A base with volume `ns-deep` nesting `depth` directories, each also holding one file. */
async function deepVolume(depth: number): Promise<string> {
  const base = await scratchDirectory();
  made.push(base);
  mkdirSync(join(base, 'ns-deep'));
  // Through descriptors: the path of the deepest level is far past PATH_MAX.
  closeSync(nestDirectories(join(base, 'ns-deep'), depth, (level) => touch(level, 'file')));
  return base;
}

const counting = callCounting;

describe('walks over a tree 5 000 levels deep', () => {
  const depth = 5000;

  it('measure usage with a bounded number of descriptors and system calls per level', {
    timeout: 60_000,
  }, async () => {
    const base = await deepVolume(depth);
    const counted = counting();
    const usage = await scanVolumeUsage(base, parseRelativeVolumePath('ns-deep'), { fs: counted.fs });
    expect(usage?.inodes).toBe(1 + 2 * depth);
    expect(counted.maxOpen).toBeLessThanOrEqual(2 * 32 + 4);
    expect(counted.calls / depth).toBeLessThan(16);
  });

  it('delete with a bounded number of descriptors and system calls per level', {
    timeout: 60_000,
  }, async () => {
    const base = await deepVolume(depth);
    const counted = counting();
    const root = new VolumeRoot(base, { fs: counted.fs });
    expect(await root.deleteVolume(parseRelativeVolumePath('ns-deep'), { pvName: 'pv-deep' })).toBe(
      'deleted',
    );
    expect(await readdir(base)).toEqual([]);
    expect(counted.maxOpen).toBeLessThanOrEqual(2 * 32 + 4);
    // Searched for records, checked for permissions, then emptied: three walks.
    expect(counted.calls / depth).toBeLessThan(3 * 16);
  });
});
