// A workload may fill one directory with hundreds of thousands of empty files (no inode limit stops
// it): a clone's copy of it must hold a bounded number of names and `lstat` results, not the whole
// directory. Measured as wide-directory-memory.test.ts does: the live heap after a full collection,
// sampled from inside the copy's own `lstat` calls while it is in the middle of the wide directory.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyTree } from '../src/copy-tree.ts';
import { type DirectoryHandle, openBase } from '../src/directory-handle.ts';
import { fillEmptyFiles, heapSampling, scratchDirectory } from './support/walk-probes.ts';

const made: string[] = [];
// Removing a few hundred thousand files takes longer than vitest's 10 s hook default on a loaded machine.
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}, 120_000);
const entries = 100_000;
const sampleEvery = 10_000;
// 100 000 names of 155 bytes are ~16 MiB however they are held, their `Stats` as much again; a batch
// of them is ~100 KiB.
const bound = 4 * 2 ** 20;

/** A base with `source` holding {@link entries} empty files with long names, and an empty `target`. */
async function wideSource(): Promise<string> {
  const base = await scratchDirectory();
  made.push(base);
  await mkdir(join(base, 'source'));
  await mkdir(join(base, 'target'), 0o700);
  fillEmptyFiles(join(base, 'source'), entries);
  return base;
}

describe(`a clone's copy of one directory of ${entries} empty files`, () => {
  it('holds a bounded number of names and lstat results', { timeout: 300_000 }, async () => {
    const base = await wideSource();
    const { fs, growth } = heapSampling(sampleEvery);
    const root = await openBase(fs, base);
    const open = async (name: string): Promise<DirectoryHandle> => {
      const dir = await root.openDirectory(name);
      if (dir === undefined) throw new Error(`no ${name}`);
      return dir;
    };
    const [source, target] = [await open('source'), await open('target')];
    try {
      expect(await copyTree(source, target)).toEqual({ entries, bytes: 0, skipped: 0 });
    } finally {
      await Promise.all([source.close(), target.close(), root.close()]);
    }
    expect(growth()).toBeLessThan(bound);
    expect((await readdir(join(base, 'target'))).length).toBe(entries);
  });
});
