import { chmod, chown, link, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CloneVolumeOptions, cloneVolume } from '../src/clone-volume.ts';
import { copyConcurrency, copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import type { FsOps } from '../src/fs-ops.ts';
import { nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import type { VolumeContext } from '../src/volume-context.ts';
import { ownerOf, rejection, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
// Many more files than are copied at once, so that every test has copies in flight together.
const files = copyConcurrency * 12;

function contextOf(base: string, fs: FsOps = nodeFsOps): VolumeContext {
  return { fs, base, now: Date.now, touch: async () => undefined };
}

/** A base with volume `ns1/src` of PV `pvc-src` holding `files` files in four directories. */
async function sourceVolume(): Promise<string> {
  const base = await tempDir();
  await new VolumeRoot(base).createVolume(path('ns1/src'), {
    owner: ownerOf('ns1', 'src', 'src'),
    mode: 0o777,
  });
  await Promise.all([0, 1, 2, 3].map((dir) => mkdir(join(base, 'ns1/src', `d${dir}`))));
  await Promise.all(
    Array.from({ length: files }, (_, index) =>
      writeFile(join(base, 'ns1/src', `d${index % 4}`, `f${index}`), `content ${index}`),
    ),
  );
  return base;
}

function request(extra: Partial<CloneVolumeOptions> = {}): CloneVolumeOptions {
  return { owner: ownerOf('ns1', 'copy', 'copy'), mode: 0o777, sourcePvName: 'pvc-src', ...extra };
}

/** Everything below `dir`, recursively. */
function entriesBelow(dir: string): Promise<string[]> {
  return readdir(dir, { recursive: true });
}

/** The only entries of `ns1` once a clone into `ns1/copy` failed: the source and the empty volume. */
async function expectNothingLeft(base: string): Promise<void> {
  expect((await readdir(join(base, 'ns1'))).filter((name) => !name.startsWith('.')).sort()).toEqual([
    'copy',
    'src',
  ]);
  expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
  expect(await readdir(join(base, 'ns1/copy'))).toEqual([]);
}

/** `nodeFsOps` calling `onOpen` with the path of each file opened for reading. */
function watchingOpens(onOpen: (path: string) => void): FsOps {
  return {
    ...nodeFsOps,
    open: async (target, flags, mode) => {
      if (/\/f\d+$/.test(target.toString()) && (flags & 0o3) === 0) onOpen(target.toString());
      return nodeFsOps.open(target, flags, mode);
    },
  };
}

describe('copying many files at once', () => {
  it('keeps hard links across directories as one inode per group', async () => {
    const base = await sourceVolume();
    // Every file gets three more names, in other directories, met while the first copy is in flight.
    await Promise.all(
      Array.from({ length: files }, async (_, index) => {
        for (const extra of [1, 2, 3]) {
          const dir = `d${(index + extra) % 4}`;
          await link(
            join(base, 'ns1/src', `d${index % 4}`, `f${index}`),
            join(base, 'ns1/src', dir, `h${index}-${extra}`),
          );
        }
      }),
    );

    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());

    for (let index = 0; index < files; index++) {
      const names = [
        join(`d${index % 4}`, `f${index}`),
        ...[1, 2, 3].map((extra) => join(`d${(index + extra) % 4}`, `h${index}-${extra}`)),
      ];
      const inodes = await Promise.all(
        names.map(async (name) => (await stat(join(base, 'ns1/copy', name))).ino),
      );
      expect(new Set(inodes).size).toBe(1);
      expect((await stat(join(base, 'ns1/copy', names[0] ?? ''))).nlink).toBe(4);
    }
  });

  it('leaves nothing behind when cancelled with many files in flight', async () => {
    const base = await sourceVolume();
    const controller = new AbortController();
    let opened = 0;
    const fs = watchingOpens(() => {
      if (++opened === files / 2) controller.abort(new Error('claim deleted'));
    });

    const error = await rejection(
      cloneVolume(
        contextOf(base, fs),
        path('ns1/src'),
        path('ns1/copy'),
        request({ signal: controller.signal }),
      ),
    );

    expect(error.message).toBe('claim deleted');
    // Those in flight finish, and no new one starts.
    expect(opened).toBeLessThan(files / 2 + copyConcurrency);
    await expectNothingLeft(base);
  });

  it('stops every copy at the first failure, and removes what was copied', async () => {
    const base = await sourceVolume();
    let opened = 0;
    let openedAfterFailure = 0;
    let failed = false;
    const fs = watchingOpens((target) => {
      opened++;
      if (failed) openedAfterFailure++;
      if (target.endsWith(`/f${files / 2}`)) {
        failed = true;
        throw systemErrorOf('EIO', -5, 'open');
      }
    });

    const error = await rejection(
      cloneVolume(contextOf(base, fs), path('ns1/src'), path('ns1/copy'), request()),
    );

    expect(error).toMatchObject({ kind: 'io', errno: 'EIO' });
    expect(opened).toBeLessThan(files);
    expect(openedAfterFailure).toBeLessThan(copyConcurrency);
    await expectNothingLeft(base);
  });

  it('checks the write guard before the data of each file in flight, and stops at a refusal', async () => {
    const base = await sourceVolume();
    const allowed = files / 2;
    let passed = 0;
    const guard = () => {
      if (passed >= allowed) throw new Error('lost leadership');
      passed++;
    };
    await mkdir(join(base, 'target'), 0o700);
    const top = await openBase(nodeFsOps, base);
    const [source, target] = await Promise.all([top.openDirectory('ns1/src'), top.openDirectory('target')]);
    if (source === undefined || target === undefined) throw new Error('missing test directories');

    // The table is not guarded here, so the copy's own checks are all that stand before its writes.
    const error = await rejection(copyTree(source, target, { beforeEachWrite: guard }));
    await Promise.all([source.close(), target.close(), top.close()]);

    expect(error.message).toBe('lost leadership');
    const copies = (await entriesBelow(join(base, 'target'))).filter((name) => /f\d+$/.test(name));
    const sizes = await Promise.all(
      copies.map(async (name) => (await stat(join(base, 'target', name))).size),
    );
    const withData = sizes.filter((size) => size > 0).length;
    // Each file's data needs a passed check of its own; the refusal stopped the rest.
    expect(withData).toBeGreaterThan(0);
    expect(withData).toBeLessThanOrEqual(passed);
    expect(passed).toBe(allowed);
    expect(withData).toBeLessThan(files);
  });
  it('keeps every owner, whether the copier has it or not, below a set-group-ID target too', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'source'));
    const owners = [
      [0, 0],
      [1234, 1234],
      [0, 777],
      [1234, 0],
    ] as const;
    await Promise.all(
      owners.map(async ([uid, gid], index) => {
        await writeFile(join(base, 'source', `f${index}`), 'data');
        await chown(join(base, 'source', `f${index}`), uid, gid);
      }),
    );
    for (const [mode, gid] of [
      [0o700, 0],
      [0o2700, 777],
    ] as const) {
      await rm(join(base, 'target'), { recursive: true, force: true });
      await mkdir(join(base, 'target'));
      await chown(join(base, 'target'), 0, gid);
      await chmod(join(base, 'target'), mode);
      const top = await openBase(nodeFsOps, base);
      const [source, target] = await Promise.all([top.openDirectory('source'), top.openDirectory('target')]);
      if (source === undefined || target === undefined) throw new Error('missing test directories');
      await copyTree(source, target).finally(() =>
        Promise.all([source.close(), target.close(), top.close()]),
      );

      const copied = await Promise.all(owners.map((_, index) => stat(join(base, 'target', `f${index}`))));
      expect(copied.map((copy) => [copy.uid, copy.gid])).toEqual(owners);
    }
  });
});
