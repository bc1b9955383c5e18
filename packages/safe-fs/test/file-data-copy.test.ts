import { execFileSync } from 'node:child_process';
import type { Stats } from 'node:fs';
import { renameSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkBytes, FileDataSlots, fileDataConcurrency } from '../src/copy-file.ts';
import { type CopyProgress, type CopyTreeOptions, copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import type { FsOps } from '../src/fs-ops.ts';
import { nodeFsOps } from '../src/index.ts';
import { rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const oPath = 0o10000000;

/** A base holding `source` (filled by `build`) and an empty `target`. */
async function baseWith(build: (source: string) => Promise<void>): Promise<string> {
  const base = await tempDir();
  await mkdir(join(base, 'source'));
  await mkdir(join(base, 'target'), 0o700);
  await build(join(base, 'source'));
  return base;
}

/** Copies `source` into `target` of `base` through `fs`. */
async function copyIn(base: string, options: CopyTreeOptions, fs: FsOps = nodeFsOps): Promise<CopyProgress> {
  const root = await openBase(fs, base);
  const [source, target] = [await root.openDirectory('source'), await root.openDirectory('target')];
  try {
    if (source === undefined || target === undefined) throw new Error('missing test directories');
    return await copyTree(source, target, options);
  } finally {
    await Promise.all([source?.close(), target?.close(), root.close()]);
  }
}

/** `count` chunks of non-zero data. */
function data(count: number): Buffer {
  return Buffer.alloc(count * chunkBytes, 'data ');
}

describe("a clone's copy of file data", () => {
  it('ends at a source truncated to nothing mid-copy, leaving every pool thread free', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const base = await baseWith(async (source) => {
      await Promise.all(names.map((name) => writeFile(join(source, name), data(8))));
    });
    let truncated = false;
    const onProgress = (): void => {
      if (truncated) return;
      truncated = true;
      for (const name of names) truncateSync(join(base, 'source', name), 0);
    };

    const progress = await copyIn(base, { onProgress });

    // At most the chunk each copy in flight had read when the files were emptied.
    const sizes = await Promise.all(names.map(async (name) => (await stat(join(base, 'target', name))).size));
    expect(sizes.every((size) => size <= chunkBytes)).toBe(true);
    expect(progress.bytes).toBeLessThanOrEqual(fileDataConcurrency * chunkBytes);
    // More calls at once than libuv has threads: each needs a thread no copy kept.
    await Promise.all(Array.from({ length: 16 }, () => stat(base)));
  }, 20_000);

  it('copies a source growing during its copy only up to the size seen at open', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'log'), data(4)));
    const onProgress = (): void => {
      writeFileSync(join(base, 'source', 'log'), data(1), { flag: 'a' });
    };

    const progress = await copyIn(base, { onProgress });

    expect((await stat(join(base, 'target', 'log'))).size).toBe(4 * chunkBytes);
    expect(progress.bytes).toBe(4 * chunkBytes);
  });

  it('keeps the holes of a sparse source and counts only the data written', async () => {
    const size = 64 * chunkBytes;
    const written = Buffer.alloc(8192, 'x');
    const at = 10 * chunkBytes + 3 * 4096;
    const base = await baseWith(async (source) => {
      const file = await open(join(source, 'disk.img'), 'w');
      await file.write(written, 0, written.length, at);
      await file.truncate(size);
      await file.close();
    });
    const source = await stat(join(base, 'source/disk.img'));
    expect(source.blocks * 512).toBeLessThan(64 * 1024); // the file system keeps holes

    const progress = await copyIn(base, {});

    const copy = await stat(join(base, 'target/disk.img'));
    expect(copy.size).toBe(size);
    expect(copy.blocks * 512).toBeLessThan(64 * 1024);
    expect(progress.bytes).toBe(written.length);
    const [original, copied] = await Promise.all([
      readFile(join(base, 'source/disk.img')),
      readFile(join(base, 'target/disk.img')),
    ]);
    expect(copied.equals(original)).toBe(true);
  });

  it('reports the bytes written after every chunk, so a limit on them sees the copy within a chunk', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'big'), data(8)));
    const reports: number[] = [];

    await copyIn(base, { onProgress: (progress) => reports.push(progress.bytes) });

    expect(reports).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 8].map((chunks) => chunks * chunkBytes));
  });

  it('stops between two chunks of one file when aborted', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'big'), data(8)));
    const controller = new AbortController();
    const reports: number[] = [];
    const onProgress = (progress: CopyProgress): void => {
      reports.push(progress.bytes);
      controller.abort(new Error('claim deleted'));
    };

    const error = await rejection(copyIn(base, { signal: controller.signal, onProgress }));

    expect(error.message).toBe('claim deleted');
    expect(reports).toEqual([chunkBytes]);
    expect((await stat(join(base, 'target/big'))).size).toBe(chunkBytes);
  });

  it('stops between two chunks of one file when the write guard refuses', async () => {
    const base = await baseWith((source) => writeFile(join(source, 'big'), data(8)));
    let refusing = false;
    const guard = (): void => {
      if (refusing) throw new Error('lost leadership');
    };
    const onProgress = (): void => {
      refusing = true;
    };

    const error = await rejection(copyIn(base, { beforeEachWrite: guard, onProgress }));

    expect(error.message).toBe('lost leadership');
    expect((await stat(join(base, 'target/big'))).size).toBe(chunkBytes);
  });

  for (const [kind, make] of [
    ['FIFO', (path: string) => execFileSync('mkfifo', [path])],
    ['device node', (path: string) => execFileSync('mknod', [path, 'c', '1', '3'])],
  ] as const) {
    it(`never opens a ${kind} swapped in for a regular file after its lstat`, async () => {
      const base = await baseWith((source) => writeFile(join(source, 'victim'), 'data'));
      make(join(base, 'swap'));
      const openedForIo: string[] = [];
      let swapped = false;
      // The swap lands between the walk's lstat and the copy's first open of the name.
      const fs: FsOps = {
        ...nodeFsOps,
        open: async (path, flags, mode) => {
          if (!swapped && path.toString().endsWith('/victim')) {
            swapped = true;
            renameSync(join(base, 'swap'), join(base, 'source/victim'));
          }
          const file = await nodeFsOps.open(path, flags, mode);
          const opened: Stats = await file.stat();
          if (!opened.isFile() && !opened.isDirectory() && (flags & oPath) === 0) {
            openedForIo.push(path.toString());
          }
          return file;
        },
      };

      const error = await rejection(copyIn(base, {}, fs));

      expect(swapped).toBe(true);
      expect(error).toMatchObject({ kind: 'io', path: 'source/victim' });
      expect(error.message).toContain('changed while being copied');
      expect(openedForIo).toEqual([]);
    });
  }
});

describe('FileDataSlots', () => {
  it('runs at most its limit of copies at once, each with a chunk buffer reused by the next', async () => {
    const slots = new FileDataSlots(2);
    let running = 0;
    let most = 0;
    const buffers = new Set<Buffer>();
    const gates = Array.from({ length: 6 }, () => Promise.withResolvers<void>());
    const tasks = gates.map((gate) =>
      slots.run(async (buffer) => {
        buffers.add(buffer);
        most = Math.max(most, ++running);
        await gate.promise;
        running--;
      }),
    );
    for (const gate of gates) gate.resolve();
    await Promise.all(tasks);

    expect(most).toBe(2);
    expect(buffers.size).toBe(2);
    expect([...buffers].every((buffer) => buffer.length === chunkBytes)).toBe(true);
  });
});
