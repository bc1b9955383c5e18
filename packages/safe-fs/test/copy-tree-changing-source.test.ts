// A clone copies a live volume: its workload may remove, add, rename or swap entries while the copy
// walks it. Nothing it does may make the copy follow a link or leave the source, and entries it
// removes are simply not copied.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CopyProgress, copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import { type FsOps, nodeFsOps } from '../src/index.ts';
import { maxOpenLevels } from '../src/open-levels.ts';
import { rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** A base holding `source` (built by `build`), an empty `target` and `outside`, with a secret. */
async function tree(build: (source: string) => Promise<void>): Promise<string> {
  const base = await tempDir();
  await mkdir(join(base, 'source'));
  await mkdir(join(base, 'target'), 0o700);
  await mkdir(join(base, 'outside'));
  await writeFile(join(base, 'outside/secret'), 'secret');
  await build(join(base, 'source'));
  return base;
}

/** Copies `source` into `target` of `base` through `fs`. */
async function copy(base: string, fs: FsOps): Promise<CopyProgress> {
  const root = await openBase(fs, base);
  const [source, target] = [await root.openDirectory('source'), await root.openDirectory('target')];
  if (source === undefined || target === undefined) throw new Error('not opened');
  try {
    return await copyTree(source, target);
  } finally {
    await Promise.all([source.close(), target.close(), root.close()]);
  }
}

/** Every path below `dir`, relative to it. */
async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort();
}

/** `nodeFsOps` whose listings run `after` once they have returned a batch. */
function afterEachBatch(after: (names: Buffer[]) => Buffer[]): FsOps {
  return {
    ...nodeFsOps,
    opendir: async (path, batchSize) => {
      const listing = await nodeFsOps.opendir(path, batchSize);
      return { read: async () => after(await listing.read()), close: () => listing.close() };
    },
  };
}

describe('copyTree of a source changing under it', () => {
  it('leaves out a file and a directory removed after they were listed', async () => {
    const base = await tree(async (source) => {
      await mkdir(join(source, 'gone-dir/sub'), { recursive: true });
      await writeFile(join(source, 'gone-file'), 'x');
      await writeFile(join(source, 'kept'), 'kept');
    });
    const fs = afterEachBatch((names) => {
      rmSync(join(base, 'source/gone-dir'), { recursive: true, force: true });
      rmSync(join(base, 'source/gone-file'), { force: true });
      return names;
    });

    expect(await copy(base, fs)).toMatchObject({ entries: 1 });
    expect(await listing(join(base, 'target'))).toEqual(['kept']);
  });

  it('copies a name listed twice once', async () => {
    const base = await tree(async (source) => {
      await mkdir(join(source, 'dir'));
      await writeFile(join(source, 'dir/inside'), 'inside');
      await writeFile(join(source, 'file'), 'file');
      symlinkSync('file', join(source, 'link'));
    });
    // What `readdir(3)` may do while the directory changes: hand a name out again.
    const fs = afterEachBatch((names) => [...names, ...names]);

    expect(await copy(base, fs)).toMatchObject({ entries: 4 });
    expect(await listing(join(base, 'target'))).toEqual(['dir', 'dir/inside', 'file', 'link']);
    expect(await readFile(join(base, 'target/dir/inside'), 'utf8')).toBe('inside');
  });

  it('does not follow a directory swapped for a link after its lstat', async () => {
    const base = await tree(async (source) => {
      await mkdir(join(source, 'dir'));
    });
    let swapped = false;
    const fs: FsOps = {
      ...nodeFsOps,
      lstat: async (path) => {
        const stats = await nodeFsOps.lstat(path);
        if (!swapped && path.toString().endsWith('/dir')) {
          swapped = true;
          renameSync(join(base, 'source/dir'), join(base, 'source/old'));
          symlinkSync(join(base, 'outside'), join(base, 'source/dir'));
        }
        return stats;
      },
    };

    const error = await rejection(copy(base, fs));

    expect(swapped).toBe(true);
    expect(error.kind).toBe('symlink');
    expect(await listing(join(base, 'target'))).not.toContain('dir/secret');
  });

  it('leaves out a link removed after its lstat, and refuses one swapped for a directory as changed', async () => {
    for (const swap of [false, true]) {
      const base = await tree(async (source) => {
        symlinkSync(join(source, '..', 'outside'), join(source, 'link'));
        await writeFile(join(source, 'kept'), 'kept');
      });
      const fs: FsOps = {
        ...nodeFsOps,
        lstat: async (path) => {
          const stats = await nodeFsOps.lstat(path);
          if (path.toString().endsWith('/link') && stats?.isSymbolicLink()) {
            rmSync(join(base, 'source/link'));
            if (swap) mkdirSync(join(base, 'source/link'));
          }
          return stats;
        },
      };

      if (swap) {
        const error = await rejection(copy(base, fs));
        expect(error).toMatchObject({
          kind: 'io',
          message: expect.stringContaining('changed while being copied'),
        });
      } else {
        await copy(base, fs);
        expect(await listing(join(base, 'target'))).toEqual(['kept']);
      }
    }
  });

  it('refuses to climb out of a subtree moved away while its level was closed for depth', async () => {
    const depth = maxOpenLevels + 8;
    const chain = Array.from({ length: depth }, () => 'd');
    const base = await tree(async (source) => {
      await mkdir(join(source, 'a', ...chain), { recursive: true });
      await writeFile(join(source, 'a', ...chain, 'bottom'), 'bottom');
    });
    let moved = false;
    const fs: FsOps = {
      ...nodeFsOps,
      lstat: async (path) => {
        // At the bottom, level `a/d` was closed long ago: move it next to the secret.
        if (!moved && path.toString().endsWith('/bottom')) {
          moved = true;
          renameSync(join(base, 'source/a/d'), join(base, 'outside/d'));
        }
        return nodeFsOps.lstat(path);
      },
    };

    const error = await rejection(copy(base, fs));

    expect(moved).toBe(true);
    expect(error.message).toContain('was moved while being copied');
    expect((await listing(join(base, 'target'))).filter((path) => path.endsWith('secret'))).toEqual([]);
  });

  it('copies what was there throughout when entries appear in levels closed for depth', async () => {
    const depth = maxOpenLevels + 8;
    const chain = Array.from({ length: depth }, () => 'd');
    const base = await tree(async (source) => {
      await mkdir(join(source, ...chain), { recursive: true });
      await writeFile(join(source, ...chain, 'bottom'), 'bottom');
      await writeFile(join(source, 'top'), 'top');
    });
    let added = false;
    const fs: FsOps = {
      ...nodeFsOps,
      lstat: async (path) => {
        if (!added && path.toString().endsWith('/bottom')) {
          added = true;
          mkdirSync(join(base, 'source/new-dir'));
          writeFileSync(join(base, 'source/d/new-file'), 'new');
        }
        return nodeFsOps.lstat(path);
      },
    };

    await copy(base, fs);

    expect(added).toBe(true);
    // Whether the new entries are copied depends on where each listing had got to, as in any copy of
    // a live volume; what was there throughout is.
    const copied = await listing(join(base, 'target'));
    expect(copied).toEqual(expect.arrayContaining([join(...chain, 'bottom'), 'top']));
  });
});
