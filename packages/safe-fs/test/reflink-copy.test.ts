import { execFileSync } from 'node:child_process';
import {
  chmod,
  chown,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { chunkBytes } from '../src/copy-file.ts';
import { type CopyProgress, type CopyTreeOptions, copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import type { FsOps } from '../src/fs-ops.ts';
import { nodeFsOps } from '../src/index.ts';
import {
  allExtentsShared,
  freeBytes,
  mountXfsWithReflink,
  type ReflinkFileSystem,
} from './support/xfs-reflink.ts';

/** Run just before each `copyFile` (the clone), while both descriptors are open. */
const clones = vi.hoisted(() => ({ before: undefined as (() => Promise<void>) | undefined }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    copyFile: async (...args: Parameters<typeof actual.copyFile>) => {
      await clones.before?.();
      return actual.copyFile(...args);
    },
  };
});

const mib = 1024 * 1024;
let xfs: ReflinkFileSystem;
let cases = 0;

beforeAll(async () => {
  xfs = await mountXfsWithReflink();
}, 60_000);

afterAll(async () => {
  await xfs.unmount();
});

// Each case's trees go with it: the file system holds only a few of the larger ones at once.
afterEach(async () => {
  clones.before = undefined;
  await rm(join(xfs.path, `case-${cases}`), { recursive: true, force: true });
});

/** A new base on the XFS file system holding `source` (filled by `build`) and an empty `target`. */
async function baseWith(build: (source: string) => Promise<void>): Promise<string> {
  const base = join(xfs.path, `case-${++cases}`);
  await mkdir(join(base, 'source'), { recursive: true });
  await mkdir(join(base, 'target'), 0o700);
  await build(join(base, 'source'));
  return base;
}

async function copyIn(
  base: string,
  options: CopyTreeOptions = {},
  fs: FsOps = nodeFsOps,
): Promise<CopyProgress> {
  const root = await openBase(fs, base);
  const [source, target] = [await root.openDirectory('source'), await root.openDirectory('target')];
  try {
    if (source === undefined || target === undefined) throw new Error('missing test directories');
    return await copyTree(source, target, options);
  } finally {
    await Promise.all([source?.close(), target?.close(), root.close()]);
  }
}

async function sameContent(base: string, name: string): Promise<boolean> {
  const [original, copy] = await Promise.all([
    readFile(join(base, 'source', name)),
    readFile(join(base, 'target', name)),
  ]);
  return copy.equals(original);
}

describe('a copy on XFS with reflink=1', () => {
  it('shares the extents of a 200 MiB file instead of copying them: no space taken', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'big'), Buffer.alloc(200 * mib, 'data ')));
    execFileSync('sync');
    const before = freeBytes(xfs.path);

    const progress = await copyIn(base);

    expect(before - freeBytes(xfs.path)).toBeLessThan(4 * mib);
    expect(allExtentsShared(join(base, 'target/big'))).toBe(true);
    expect(allExtentsShared(join(base, 'source/big'))).toBe(true);
    expect(progress.bytes).toBe(200 * mib);
    expect(await sameContent(base, 'big')).toBe(true);
  });

  it("copies the bytes under reflink 'never': the space is taken and nothing is shared", async () => {
    const base = await baseWith((source) => writeFile(join(source, 'big'), Buffer.alloc(64 * mib, 'data ')));
    execFileSync('sync');
    const before = freeBytes(xfs.path);

    await copyIn(base, { reflink: 'never' });

    expect(before - freeBytes(xfs.path)).toBeGreaterThanOrEqual(64 * mib);
    expect(allExtentsShared(join(base, 'target/big'))).toBe(false);
    expect(await sameContent(base, 'big')).toBe(true);
  });

  it('keeps holes, size, owner and mode (set-id bits included) of a cloned file', async () => {
    const size = 64 * chunkBytes;
    const at = 10 * chunkBytes + 3 * 4096;
    const base = await baseWith(async (source) => {
      const file = await open(join(source, 'disk.img'), 'w');
      await file.write(Buffer.alloc(8192, 'x'), 0, 8192, at);
      await file.truncate(size);
      await file.close();
      await chown(join(source, 'disk.img'), 1234, 5678);
      await chmod(join(source, 'disk.img'), 0o6751);
    });

    const progress = await copyIn(base);

    const copy = await stat(join(base, 'target/disk.img'));
    expect(copy.size).toBe(size);
    expect(copy.blocks * 512).toBeLessThan(64 * 1024);
    expect({ uid: copy.uid, gid: copy.gid, mode: copy.mode & 0o7777 }).toEqual({
      uid: 1234,
      gid: 5678,
      mode: 0o6751,
    });
    expect(progress.bytes).toBeLessThan(64 * 1024);
    expect(allExtentsShared(join(base, 'target/disk.img'))).toBe(true);
    expect(await sameContent(base, 'disk.img')).toBe(true);
  });

  it('clones a source truncated after its lstat as it is then, leaving every pool thread free', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const base = await baseWith(async (source) => {
      await Promise.all(names.map((name) => writeFile(join(source, name), Buffer.alloc(8 * mib, 'data '))));
    });
    // Each source is emptied as the copy opens it, between the walk's lstat and the clone.
    const fs: FsOps = {
      ...nodeFsOps,
      open: async (path, flags, mode) => {
        const name = names.find((candidate) => path.toString().endsWith(`/${candidate}`));
        if (name !== undefined) await truncate(join(base, 'source', name), 0);
        return nodeFsOps.open(path, flags, mode);
      },
    };

    const progress = await copyIn(base, {}, fs);

    const sizes = await Promise.all(names.map(async (name) => (await stat(join(base, 'target', name))).size));
    expect(sizes).toEqual(names.map(() => 0));
    expect(progress.bytes).toBe(0);
    await Promise.all(Array.from({ length: 16 }, () => stat(base)));
  });

  it('clones the very files it opened, whatever their names are swapped for before the clone', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'data'), Buffer.alloc(mib, 'tenant ')));
    const secret = join(base, 'secret');
    const outside = join(base, 'outside');
    await writeFile(secret, 'secret of another volume');
    await writeFile(outside, 'must stay as it is');
    // The source's name now leads to another volume's file, the copy's name to a file outside.
    clones.before = async () => {
      await rename(join(base, 'source/data'), join(base, 'source/moved'));
      await symlink(secret, join(base, 'source/data'));
      await rename(join(base, 'target/data'), join(base, 'target/moved'));
      await symlink(outside, join(base, 'target/data'));
    };

    await copyIn(base);

    expect(await readFile(outside, 'utf8')).toBe('must stay as it is');
    const copy = await readFile(join(base, 'target/moved'));
    expect(copy.equals(Buffer.alloc(mib, 'tenant '))).toBe(true);
    expect(allExtentsShared(join(base, 'target/moved'))).toBe(true);
  });

  it('keeps hard links as links to one clone', async () => {
    const base = await baseWith(async (source) => {
      await writeFile(join(source, 'first'), Buffer.alloc(mib, 'data '));
      execFileSync('ln', [join(source, 'first'), join(source, 'second')]);
    });

    const progress = await copyIn(base);

    const [first, second] = await Promise.all([
      stat(join(base, 'target/first')),
      stat(join(base, 'target/second')),
    ]);
    expect(second.ino).toBe(first.ino);
    expect(progress.bytes).toBe(mib);
    expect(allExtentsShared(join(base, 'target/first'))).toBe(true);
  });
});
