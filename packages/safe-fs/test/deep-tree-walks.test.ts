// A workload may nest directories thousands of levels deep: the walks hold a bounded number of
// descriptors and make a bounded number of system calls per level, so their cost grows with the tree.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FsOps,
  localFsOps,
  parseRelativeVolumePath,
  scanVolumeUsage,
  VolumeRoot,
} from '../src/index.ts';

const made: string[] = [];
afterEach(() => {
  // `rm` walks by descriptor; Node.js's recursive removal fails on paths past PATH_MAX.
  for (const dir of made.splice(0)) execFileSync('rm', ['-rf', dir]);
});

/** A base with volume `ns-deep` nesting `depth` directories, each also holding one file. */
async function deepVolume(depth: number): Promise<string> {
  const base = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'safe-fs-'));
  made.push(base);
  mkdirSync(join(base, 'ns-deep'));
  // Through descriptors: the path of the deepest level is far past PATH_MAX.
  let fd = openSync(join(base, 'ns-deep'), constants.O_DIRECTORY);
  for (let level = 0; level < depth; level++) {
    closeSync(openSync(`/proc/self/fd/${fd}/file`, constants.O_CREAT | constants.O_WRONLY, 0o644));
    mkdirSync(`/proc/self/fd/${fd}/d`);
    const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_DIRECTORY);
    closeSync(fd);
    fd = next;
  }
  closeSync(fd);
  return base;
}

/** `localFsOps` counting its calls and the most descriptors it held at once. */
function counting(): { readonly fs: FsOps; calls: number; open: number; maxOpen: number } {
  const counts = { calls: 0, open: 0, maxOpen: 0 };
  const opened = () => {
    counts.open++;
    counts.maxOpen = Math.max(counts.maxOpen, counts.open);
  };
  const count =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      counts.calls++;
      return fn(...args);
    };
  const fs: FsOps = {
    ...Object.fromEntries(Object.entries(localFsOps).map(([name, fn]) => [name, count(fn)])),
    open: async (path, flags, mode) => {
      counts.calls++;
      const file = await localFsOps.open(path, flags, mode);
      opened();
      let closed = false;
      return {
        get fd() {
          return file.fd;
        },
        stat: () => file.stat(),
        chmod: (mode) => file.chmod(mode),
        chown: (uid, gid) => file.chown(uid, gid),
        readFile: (encoding) => file.readFile(encoding),
        writeFile: (data) => file.writeFile(data),
        datasync: () => file.datasync(),
        close: async () => {
          if (!closed) counts.open--;
          closed = true;
          await file.close();
        },
      };
    },
    opendir: async (path, batchSize) => {
      counts.calls++;
      const listing = await localFsOps.opendir(path, batchSize);
      opened();
      let closed = false;
      return {
        read: () => {
          counts.calls++;
          return listing.read();
        },
        close: async () => {
          if (!closed) counts.open--;
          closed = true;
          await listing.close();
        },
      };
    },
  } as FsOps;
  return Object.assign(counts, { fs });
}

describe('walks over a tree 5 000 levels deep', () => {
  const depth = 5000;

  it('measure usage with a bounded number of descriptors and system calls per level', {
    timeout: 60_000,
  }, async () => {
    const base = await deepVolume(depth);
    const counted = counting();
    const usage = await scanVolumeUsage(base, parseRelativeVolumePath('ns-deep'), { fs: counted.fs });
    expect(usage?.inodes).toBe(1 + 2 * depth);
    expect(counted.maxOpen).toBeLessThanOrEqual(2 * 32 + 4);
    expect(counted.calls / depth).toBeLessThan(16);
  });

  it('delete with a bounded number of descriptors and system calls per level', {
    timeout: 60_000,
  }, async () => {
    const base = await deepVolume(depth);
    const counted = counting();
    const root = new VolumeRoot(base, { fs: counted.fs });
    expect(await root.deleteVolume(parseRelativeVolumePath('ns-deep'), { pvName: 'pv-deep' })).toBe(
      'deleted',
    );
    expect(await readdir(base)).toEqual([]);
    expect(counted.maxOpen).toBeLessThanOrEqual(2 * 32 + 4);
    // Searched for records, checked for permissions, then emptied: three walks.
    expect(counted.calls / depth).toBeLessThan(3 * 16);
  });
});
