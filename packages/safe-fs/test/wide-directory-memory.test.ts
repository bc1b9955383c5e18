// A workload may fill one directory with hundreds of thousands of empty files (no inode limit stops
// it): every walk over a volume must then hold a bounded number of names, not the whole directory.
// What a walk retains is measured as the live heap after a full collection, sampled while the walk
// is in the middle of the wide directory (from inside its own system calls); the heap's garbage
// would hide a few MiB otherwise.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DirectoryHandle, openBase } from '../src/directory-handle.ts';
import { parseRelativeVolumePath, scanVolumeUsage } from '../src/index.ts';
import { assertEmptiable, emptyDirectory } from '../src/remove-tree.ts';
import { findReservedName } from '../src/reserved-name-search.ts';
import { fillEmptyFiles, heapSampling, scratchDirectory } from './support/walk-probes.ts';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
const entries = 100_000;
const sampleEvery = 10_000;
// 100 000 names of 155 bytes are ~16 MiB however they are held; a batch of them is ~40 KiB.
const bound = 4 * 2 ** 20;

/** A base with volume `ns/pvc-wide` holding {@link entries} empty files with long names. */
async function wideVolume(): Promise<{ base: string; dir: string }> {
  const base = await scratchDirectory();
  made.push(base);
  const dir = join(base, 'ns/pvc-wide');
  await mkdir(dir, { recursive: true });
  fillEmptyFiles(dir, entries);
  return { base, dir };
}

const sampling = () => heapSampling(sampleEvery);

/** Runs `walk` on volume `ns/pvc-wide` of `base`; returns the live heap it grew by meanwhile. */
async function retainedBy(
  base: string,
  walk: (volume: DirectoryHandle) => Promise<unknown>,
): Promise<number> {
  const { fs, growth } = sampling();
  const root = await openBase(fs, base);
  try {
    const ns = await root.openDirectory('ns');
    const volume = await ns?.openDirectory('pvc-wide');
    await ns?.close();
    if (volume === undefined) throw new Error('no volume');
    try {
      await walk(volume);
    } finally {
      await volume.close();
    }
  } finally {
    await root.close();
  }
  return growth();
}

describe(`walks over one directory of ${entries} empty files`, () => {
  it('measure usage holding a bounded number of names', { timeout: 120_000 }, async () => {
    const { base } = await wideVolume();
    const { fs, growth } = sampling();
    const usage = await scanVolumeUsage(base, parseRelativeVolumePath('ns/pvc-wide'), { fs });
    expect(usage?.inodes).toBe(entries + 1);
    expect(growth()).toBeLessThan(bound);
  });

  it('search for reserved names and check permissions before a delete holding a bounded number of names', {
    timeout: 120_000,
  }, async () => {
    const { base } = await wideVolume();
    const search = retainedBy(base, async (volume) => expect(await findReservedName(volume)).toBeUndefined());
    expect(await search).toBeLessThan(bound);
    expect(await retainedBy(base, (volume) => assertEmptiable(volume))).toBeLessThan(bound);
  });

  it('delete every entry holding a bounded number of names', { timeout: 120_000 }, async () => {
    const { base, dir } = await wideVolume();
    expect(await retainedBy(base, (volume) => emptyDirectory(volume))).toBeLessThan(bound);
    expect(await readdir(dir)).toEqual([]);
  });
});
