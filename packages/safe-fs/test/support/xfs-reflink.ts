/**
 * A real XFS file system with `reflink=1`, made for one test file: a sparse image in the temporary
 * directory, `mkfs.xfs`, and `mount -o loop` (root, `xfsprogs` and a loop device, as `.ci/run` has;
 * `scripts/prerequisites.ts` installs `xfsprogs`). Each call makes its own, so the two safe-fs
 * projects running at once never share one.
 */
import { execFileSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A mounted XFS file system with reflinks; `unmount` removes it and its image. */
export interface ReflinkFileSystem {
  /** Where it is mounted. */
  readonly path: string;
  unmount(): Promise<void>;
}

/** Makes and mounts a 512 MiB XFS file system (`reflink=1`); its image stays sparse. */
export async function mountXfsWithReflink(): Promise<ReflinkFileSystem> {
  const dir = await mkdtemp(join(tmpdir(), 'safe-fs-xfs-'));
  const image = join(dir, 'xfs.img');
  const path = join(dir, 'mnt');
  try {
    execFileSync('truncate', ['-s', '512M', image]);
    execFileSync('mkfs.xfs', ['-q', '-m', 'reflink=1', image]);
    execFileSync('mkdir', [path]);
    execFileSync('mount', ['-o', 'loop', image, path]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    path,
    unmount: async () => {
      // The loop device is detached with the unmount (`mount -o loop` set autoclear).
      execFileSync('umount', [path]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether `filefrag -v` lists every extent of `file` as shared with another file. */
export function allExtentsShared(file: string): boolean {
  const extents = execFileSync('filefrag', ['-v', file], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => /^\s*\d+:/.test(line));
  return extents.length > 0 && extents.every((line) => line.includes('shared'));
}

/** Bytes free on the file system holding `path`. */
export function freeBytes(path: string): number {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
}
