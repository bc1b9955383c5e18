// A workload may nest directories thousands of levels deep: a clone's copy holds a bounded number of
// descriptors and makes a bounded number of system calls per level, keeps hard links whatever the
// depth of their names (past PATH_MAX), and refuses a tree deeper than its limit with an error naming
// where.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyConcurrency, copyTree } from '../src/copy-tree.ts';
import { type DirectoryHandle, openBase } from '../src/directory-handle.ts';
import { type FsOps, localFsOps } from '../src/index.ts';
import { maxOpenLevels } from '../src/open-levels.ts';
import { rejection } from './fixtures.ts';
import { callCounting, nestDirectories, scratchDirectory, touch } from './support/walk-probes.ts';

const made: string[] = [];
afterEach(() => {
  // `rm` walks by descriptor; Node.js's recursive removal fails on paths past PATH_MAX.
  for (const dir of made.splice(0)) execFileSync('rm', ['-rf', dir]);
});

/**
 * A base with a `source` nesting `depth` directories `d`, each also holding an
 * empty `file`; `shared` at the top is hard-linked as `shared` at the bottom.
 */
async function deepSource(depth: number): Promise<string> {
  const base = await scratchDirectory();
  made.push(base);
  mkdirSync(join(base, 'source'));
  writeFileSync(join(base, 'source/shared'), 'shared');
  // Through descriptors: the path of the deepest level is far past PATH_MAX.
  const fd = nestDirectories(join(base, 'source'), depth, (level) => touch(level, 'file'));
  linkSync(join(base, 'source/shared'), `/proc/self/fd/${fd}/shared`);
  closeSync(fd);
  return base;
}

/** The inode of `name` in the directory `depth` levels of `d` below `top`. */
function inodeBelow(top: string, depth: number, name: string): number {
  let fd = openSync(top, constants.O_DIRECTORY);
  for (let level = 0; level < depth; level++) {
    const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_DIRECTORY);
    closeSync(fd);
    fd = next;
  }
  try {
    const file = openSync(`/proc/self/fd/${fd}/${name}`, constants.O_RDONLY);
    try {
      return fstatSync(file).ino;
    } finally {
      closeSync(file);
    }
  } finally {
    closeSync(fd);
  }
}

const counting = callCounting;

/** Copies `source` into `into`, a new directory of `base`, through `fs`. */
async function copy(base: string, fs: FsOps, options: Parameters<typeof copyTree>[2] = {}, into = 'target') {
  mkdirSync(join(base, into), { recursive: true, mode: 0o700 });
  const root = await openBase(fs, base);
  const open = async (name: string): Promise<DirectoryHandle> => {
    const dir = await root.openDirectory(name);
    if (dir === undefined) throw new Error(`no ${name}`);
    return dir;
  };
  const [source, target] = [await open('source'), await open(into)];
  try {
    return await copyTree(source, target, options);
  } finally {
    await Promise.all([source.close(), target.close(), root.close()]);
  }
}

describe("a clone's copy of a tree 5 000 levels deep", () => {
  const depth = 5000;

  it('holds a bounded number of descriptors, makes a bounded number of calls per level, and keeps hard links', {
    timeout: 120_000,
  }, async () => {
    const base = await deepSource(depth);
    const counted = counting();

    // Directories and files, the two names of `shared` counted apart.
    expect(await copy(base, counted.fs)).toEqual({ entries: 2 * depth + 2, bytes: 6, skipped: 0 });

    // A source, its listing and a target per open level, one file located per task, the links' directory.
    expect(counted.maxOpen).toBeLessThanOrEqual(3 * (maxOpenLevels + 1) + copyConcurrency + 2);
    expect(counted.calls / depth).toBeLessThan(32);
    const target = join(base, 'target');
    expect((await readdir(target)).sort()).toEqual(['d', 'file', 'shared']);
    expect(inodeBelow(target, depth, 'shared')).toBe(inodeBelow(target, 0, 'shared'));
    expect(inodeBelow(target, depth, 'shared')).not.toBe(inodeBelow(join(base, 'source'), 0, 'shared'));
  });

  it('refuses it past maxDepth, with an error naming the volume', { timeout: 120_000 }, async () => {
    const base = await deepSource(depth);
    const fits = copy(base, localFsOps, { maxDepth: depth }, 'fits');
    expect(await fits).toMatchObject({ entries: 2 * depth + 2 });

    const error = await rejection(copy(base, localFsOps, { maxDepth: depth - 1 }, 'refused'));
    expect(error.kind).toBe('io');
    expect(error.message).toBe(
      `copy "source": has a directory nested more than ${depth - 1} directories deep, which a clone refuses`,
    );
  });
});
