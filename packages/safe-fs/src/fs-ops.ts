/**
 * The system calls {@link VolumeRoot} makes, as a replaceable table. Production uses
 * {@link nodeFsOps}; tests spread it and override one entry to inject a failure (`fchmod` → `EACCES`)
 * or a race (swap a directory for a symlink just before `mkdir`) without mocking `node:fs`.
 */

import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';

/**
 * A path as the calls receive it: `/proc/self/fd/<fd>/<name>`, a `Buffer` when `name` is not valid
 * UTF-8 (a workload may create such names, and they must still be removable).
 */
export type FsPath = string | Buffer;

/** Path-based calls receive `/proc/self/fd/<fd>/<name>` paths; see the package README. */
export interface FsOps {
  /** Opens `path` with `open(2)` flags, and `mode` when it creates the file. */
  open(path: FsPath, flags: number, mode?: number): Promise<fs.FileHandle>;
  /** Stats the open file (`fstat(2)`). */
  fstat(handle: fs.FileHandle): Promise<Stats>;
  /** Sets the open file's permission bits (`fchmod(2)`). */
  fchmod(handle: fs.FileHandle, mode: number): Promise<void>;
  /** Sets the open file's owner and group (`fchown(2)`). */
  fchown(handle: fs.FileHandle, uid: number, gid: number): Promise<void>;
  /** Creates one directory with `mode`; not recursive, and fails if the entry exists. */
  mkdir(path: FsPath, mode: number): Promise<void>;
  /** Stats `path` without following a final symlink (`lstat(2)`). */
  lstat(path: FsPath): Promise<Stats>;
  /** Entry names as raw bytes, so names that are not UTF-8 survive the round trip. */
  readdir(path: FsPath): Promise<Buffer[]>;
  /** Removes an empty directory. */
  rmdir(path: FsPath): Promise<void>;
  /** Removes a non-directory entry. */
  unlink(path: FsPath): Promise<void>;
  /** Renames `oldPath` to `newPath` (`rename(2)`). */
  rename(oldPath: FsPath, newPath: FsPath): Promise<void>;
  /** Creates `newPath` as a hard link to `existingPath`. */
  link(existingPath: FsPath, newPath: FsPath): Promise<void>;
}

/** The real system calls, from `node:fs/promises`. */
export const nodeFsOps: FsOps = {
  open: (path, flags, mode) => fs.open(path, flags, mode),
  fstat: (handle) => handle.stat(),
  fchmod: (handle, mode) => handle.chmod(mode),
  fchown: (handle, uid, gid) => handle.chown(uid, gid),
  mkdir: async (path, mode) => {
    await fs.mkdir(path, { mode });
  },
  lstat: (path) => fs.lstat(path),
  readdir: (path) => fs.readdir(path, { encoding: 'buffer' }),
  rmdir: (path) => fs.rmdir(path),
  unlink: (path) => fs.unlink(path),
  rename: (oldPath, newPath) => fs.rename(oldPath, newPath),
  link: (existingPath, newPath) => fs.link(existingPath, newPath),
};
