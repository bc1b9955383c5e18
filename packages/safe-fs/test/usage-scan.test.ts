import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { link, mkdir, rename, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type FsOps,
  nodeFsOps,
  parseRelativeVolumePath,
  type RelativeVolumePath,
  scanVolumeUsage,
} from '../src/index.ts';
import { rejection, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const volume: RelativeVolumePath = parseRelativeVolumePath('ns/pvc-1');

/** `du -x` of `dir`: allocated bytes and inodes, hard links once, links not followed. */
function du(dir: string): { bytes: number; inodes: number } {
  const first = (args: string[]) => Number(execFileSync('du', args, { encoding: 'utf8' }).split('\t')[0]);
  return { bytes: first(['-s', '-x', '-B1', dir]), inodes: first(['-s', '-x', '--inodes', dir]) };
}

async function rootWithVolume(): Promise<{ base: string; dir: string }> {
  const base = await tempDir();
  const dir = join(base, volume);
  await mkdir(dir, { recursive: true });
  return { base, dir };
}

/** `fs` whose calls on the directory `path` (a real path) fail with `code`. */
function refusing(path: string, call: 'readdir' | 'open', code = 'EACCES'): FsOps {
  const target = (p: string | Buffer) => readlinkSync(String(p)) === path;
  const resolved = (p: string | Buffer) => {
    const text = String(p);
    const slash = text.lastIndexOf('/');
    return join(readlinkSync(text.slice(0, slash)), text.slice(slash + 1));
  };
  return {
    ...nodeFsOps,
    opendir: (p, batchSize) =>
      call === 'readdir' && target(p)
        ? Promise.reject(systemErrorOf(code, -13, 'opendir'))
        : nodeFsOps.opendir(p, batchSize),
    open: (p, flags, mode) =>
      call === 'open' && String(p).startsWith('/proc/self/fd/') && resolved(p) === path
        ? Promise.reject(systemErrorOf(code, -13, 'open'))
        : nodeFsOps.open(p, flags, mode),
  };
}

describe('scanVolumeUsage', () => {
  it('measures what du -x measures: allocated blocks and inodes of an ordinary tree', async () => {
    const { base, dir } = await rootWithVolume();
    await mkdir(join(dir, 'a/b/c'), { recursive: true });
    await writeFile(join(dir, 'a/small'), 'hello');
    await writeFile(join(dir, 'a/b/big'), Buffer.alloc(300_000, 1));
    // Sparse: 1 GiB apparent, nothing allocated.
    await writeFile(join(dir, 'sparse'), '');
    await truncate(join(dir, 'sparse'), 2 ** 30);

    const usage = await scanVolumeUsage(base, volume);

    expect(usage).toMatchObject({ ...du(dir), unreadable: 0, otherFileSystems: 0 });
    expect(usage?.bytes).toBeLessThan(2 ** 20);
  });

  it('counts a file with several hard links once', async () => {
    const { base, dir } = await rootWithVolume();
    await writeFile(join(dir, 'data'), Buffer.alloc(64 * 1024, 1));
    await mkdir(join(dir, 'd'));
    for (const name of ['l1', 'l2', 'd/l3']) await link(join(dir, 'data'), join(dir, name));
    const single = await rootWithVolume();
    await writeFile(join(single.dir, 'data'), Buffer.alloc(64 * 1024, 1));
    await mkdir(join(single.dir, 'd'));

    const [linked, plain] = [await scanVolumeUsage(base, volume), await scanVolumeUsage(single.base, volume)];

    expect(linked).toMatchObject(du(dir));
    expect(linked?.bytes).toBe(plain?.bytes);
    expect(linked?.inodes).toBe(plain?.inodes);
  });

  it('never follows a link out of the volume, to a file or to a directory', async () => {
    const { base, dir } = await rootWithVolume();
    const outside = await tempDir();
    await writeFile(join(outside, 'secret'), Buffer.alloc(1 << 20, 1));
    await symlink(join(outside, 'secret'), join(dir, 'to-file'));
    await symlink(outside, join(dir, 'to-dir'));
    await symlink('../../..', join(dir, 'up'));

    const usage = await scanVolumeUsage(base, volume);

    // The volume and its three links: the megabyte outside is not counted.
    expect(usage).toMatchObject({ ...du(dir), inodes: 4 });
    expect(usage?.bytes).toBeLessThan(1 << 20);
  });

  it('counts a FIFO, a socket-like special file and a non-UTF-8 name without opening them', async () => {
    const { base, dir } = await rootWithVolume();
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    await writeFile(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xff, 0xfe])]), 'x');

    const usage = await scanVolumeUsage(base, volume);

    expect(usage).toMatchObject({ ...du(dir), inodes: 3 });
  });

  it('walks a tree far deeper than the descriptors it may hold', async () => {
    const { base, dir } = await rootWithVolume();
    const depth = 300;
    const deepest = join(dir, ...Array.from({ length: depth }, () => 'd'));
    await mkdir(deepest, { recursive: true });
    await writeFile(join(deepest, 'leaf'), 'x');
    // A sibling at every tenth level, so closed levels must be reopened and walked on.
    for (let level = 10; level < depth; level += 10) {
      await writeFile(join(dir, ...Array.from({ length: level }, () => 'd'), 'side'), 'y');
    }

    const usage = await scanVolumeUsage(base, volume);

    expect(usage?.inodes).toBe(1 + depth + 1 + 29);
    expect(usage).toMatchObject(du(dir));
  });

  it('counts a directory it may not list as unreadable and goes on with the rest', async () => {
    const { base, dir } = await rootWithVolume();
    await mkdir(join(dir, 'locked'));
    await writeFile(join(dir, 'locked/inside'), Buffer.alloc(100_000, 1));
    await writeFile(join(dir, 'visible'), 'x');

    const usage = await scanVolumeUsage(base, volume, { fs: refusing(join(dir, 'locked'), 'readdir') });

    expect(usage).toMatchObject({ inodes: 3, unreadable: 1 });
  });

  it('counts a directory it may not open as unreadable', async () => {
    const { base, dir } = await rootWithVolume();
    await mkdir(join(dir, 'locked/deeper'), { recursive: true });

    const usage = await scanVolumeUsage(base, volume, { fs: refusing(join(dir, 'locked'), 'open') });

    expect(usage).toMatchObject({ inodes: 2, unreadable: 1 });
  });

  it('does not enter a directory on another file system', async () => {
    const { base, dir } = await rootWithVolume();
    await mkdir(join(dir, 'mnt'));
    await writeFile(join(dir, 'mnt/file'), 'x');
    const mounted: FsOps = {
      ...nodeFsOps,
      lstat: async (p) => {
        const stats = await nodeFsOps.lstat(p);
        if (stats !== undefined && String(p).endsWith('/mnt')) stats.dev += 1;
        return stats;
      },
    };

    const usage = await scanVolumeUsage(base, volume, { fs: mounted });

    expect(usage).toMatchObject({ inodes: 1, otherFileSystems: 1 });
  });

  it('refuses a volume that is a link, and answers undefined for one that is absent', async () => {
    const { base, dir } = await rootWithVolume();
    const outside = await tempDir();
    await rename(dir, join(base, 'ns/moved'));
    await symlink(outside, dir);

    expect(await rejection(scanVolumeUsage(base, volume))).toMatchObject({ kind: 'symlink' });
    expect(await scanVolumeUsage(base, parseRelativeVolumePath('ns/none'))).toBeUndefined();
    expect(await scanVolumeUsage(base, parseRelativeVolumePath('none/pvc'))).toBeUndefined();
  });

  it('waits for the budget before every system call and stops when aborted', async () => {
    const { base, dir } = await rootWithVolume();
    await mkdir(join(dir, 'a'));
    for (const name of ['1', '2', 'a/3']) await writeFile(join(dir, name), name);
    let paced = 0;
    const usage = await scanVolumeUsage(base, volume, {
      pace: async () => {
        paced++;
      },
    });
    // Two listings, four lstats, one open.
    expect(usage?.operations).toBe(7);
    expect(paced).toBe(7);

    const stop = new AbortController();
    const reason = new Error('term ended');
    let calls = 0;
    const aborted = scanVolumeUsage(base, volume, {
      signal: stop.signal,
      pace: async () => {
        if (++calls === 3) stop.abort(reason);
      },
    });
    await expect(aborted).rejects.toBe(reason);
    expect(calls).toBe(3);
  });
});
