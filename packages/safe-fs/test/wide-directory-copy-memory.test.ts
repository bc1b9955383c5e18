// A workload may fill one directory with hundreds of thousands of empty files (no inode limit stops
// it): a clone's copy of it must hold a bounded number of names and `lstat` results, not the whole
// directory. Measured as wide-directory-memory.test.ts does: the live heap after a full collection,
// sampled from inside the copy's own `lstat` calls while it is in the middle of the wide directory.
import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { copyTree } from '../src/copy-tree.ts';
import { type DirectoryHandle, openBase } from '../src/directory-handle.ts';
import { type FsOps, localFsOps } from '../src/index.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
const entries = 100_000;
const sampleEvery = 10_000;
// 100 000 names of 155 bytes are ~16 MiB however they are held, their `Stats` as much again; a batch
// of them is ~100 KiB.
const bound = 4 * 2 ** 20;

/** A base with `source` holding {@link entries} empty files with long names, and an empty `target`. */
async function wideSource(): Promise<string> {
  const base = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'safe-fs-'));
  made.push(base);
  await mkdir(join(base, 'source'));
  await mkdir(join(base, 'target'), 0o700);
  const prefix = 'f'.repeat(150);
  for (let index = 0; index < entries; index++) {
    const file = join(base, 'source', `${prefix}${index}`);
    closeSync(openSync(file, constants.O_CREAT | constants.O_WRONLY, 0o644));
  }
  return base;
}

/** `localFsOps` that records the largest live heap seen, every {@link sampleEvery} `lstat` calls. */
function sampling(): { readonly fs: FsOps; growth(): number } {
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
    growth: () => peak - baseline,
  };
}

describe(`a clone's copy of one directory of ${entries} empty files`, () => {
  it('holds a bounded number of names and lstat results', { timeout: 300_000 }, async () => {
    const base = await wideSource();
    const { fs, growth } = sampling();
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
