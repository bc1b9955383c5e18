import { mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type CopyProgress, copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import { nodeFsOps } from '../src/index.ts';
import { rejection, systemErrorOf, useTempDirs } from './fixtures.ts';
import { scratchDirectory } from './support/walk-probes.ts';

/** Every `copyFile` call (the only way to `FICLONE`), and a failure to answer instead, when set. */
const clones = vi.hoisted(() => ({ calls: 0, failWith: undefined as Error | undefined }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    copyFile: async (...args: Parameters<typeof actual.copyFile>) => {
      clones.calls++;
      if (clones.failWith !== undefined) throw clones.failWith;
      return actual.copyFile(...args);
    },
  };
});

beforeEach(() => {
  clones.calls = 0;
  clones.failWith = undefined;
});

const tempDir = useTempDirs();
const names = Array.from({ length: 12 }, (_, index) => `file-${index}`);

/** A base in `parent` whose `source` holds the files of {@link names}, one of them sparse. */
async function baseIn(parent: string): Promise<string> {
  await mkdir(join(parent, 'source'), { recursive: true });
  await mkdir(join(parent, 'target'), 0o700);
  await Promise.all(
    names.map((name, index) => writeFile(join(parent, 'source', name), `data ${index}\n`.repeat(5000))),
  );
  const sparse = await open(join(parent, 'source', 'sparse'), 'w');
  await sparse.write('end', 32 * 1024 * 1024);
  await sparse.close();
  return parent;
}

async function copyIn(base: string): Promise<CopyProgress> {
  const root = await openBase(nodeFsOps, base);
  const [source, target] = [await root.openDirectory('source'), await root.openDirectory('target')];
  try {
    if (source === undefined || target === undefined) throw new Error('missing test directories');
    return await copyTree(source, target);
  } finally {
    await Promise.all([source?.close(), target?.close(), root.close()]);
  }
}

async function expectExactCopies(base: string): Promise<void> {
  for (const name of [...names, 'sparse']) {
    const [original, copy] = await Promise.all([
      readFile(join(base, 'source', name)),
      readFile(join(base, 'target', name)),
    ]);
    expect(copy.equals(original), name).toBe(true);
  }
  const sparse = await stat(join(base, 'target/sparse'));
  expect(sparse.size).toBe(32 * 1024 * 1024 + 3);
  expect(sparse.blocks * 512).toBeLessThan(64 * 1024);
}

describe('a copy where the file system cannot share extents', () => {
  for (const [fileSystem, parent] of [
    ['tmpfs (/dev/shm)', scratchDirectory],
    ['the temporary directory', tempDir],
  ] as const) {
    it(`on ${fileSystem}: tries one clone, then copies every file's bytes, holes kept`, async () => {
      const base = await baseIn(await parent());

      await copyIn(base);

      expect(clones.calls).toBe(1);
      await expectExactCopies(base);
    });
  }

  it('copies the bytes of a file the file system refuses to clone, and tries the next one', async () => {
    const base = await baseIn(await tempDir());
    clones.failWith = systemErrorOf('EINVAL', -22, 'copyfile');

    await copyIn(base);

    expect(clones.calls).toBe(names.length + 1);
    await expectExactCopies(base);
  });

  it('fails the copy on any other error of a clone, naming the file', async () => {
    const base = await baseIn(await tempDir());
    clones.failWith = systemErrorOf('EIO', -5, 'copyfile');

    const error = await rejection(copyIn(base));

    expect(error).toMatchObject({ kind: 'io', operation: 'ficlone' });
    expect(error.path).toMatch(/^target\//);
  });
});
