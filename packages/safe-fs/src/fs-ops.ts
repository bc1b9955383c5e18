/**
 * The system calls {@link VolumeRoot} makes, as a replaceable table. Production uses
 * {@link nodeFsOps}; tests spread it and override one entry to inject a failure (`fchmod` → `EACCES`)
 * or a race (swap a directory for a symlink just before `mkdir`) without mocking `node:fs`.
 */

import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';

/** Path-based calls receive `/proc/self/fd/<fd>/<name>` paths; see the package README. */
export interface FsOps {
  open(path: string, flags: number, mode?: number): Promise<fs.FileHandle>;
  fchmod(handle: fs.FileHandle, mode: number): Promise<void>;
  fchown(handle: fs.FileHandle, uid: number, gid: number): Promise<void>;
  mkdir(path: string, mode: number): Promise<void>;
  lstat(path: string): Promise<Stats>;
  readdir(path: string): Promise<string[]>;
  rmdir(path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(oldPath: string, newPath: string): Promise<void>;
  link(existingPath: string, newPath: string): Promise<void>;
}

/** The real system calls, from `node:fs/promises`. */
export const nodeFsOps: FsOps = {
  open: (path, flags, mode) => fs.open(path, flags, mode),
  fchmod: (handle, mode) => handle.chmod(mode),
  fchown: (handle, uid, gid) => handle.chown(uid, gid),
  mkdir: async (path, mode) => {
    await fs.mkdir(path, { mode });
  },
  lstat: (path) => fs.lstat(path),
  readdir: (path) => fs.readdir(path),
  rmdir: (path) => fs.rmdir(path),
  unlink: (path) => fs.unlink(path),
  rename: (oldPath, newPath) => fs.rename(oldPath, newPath),
  link: (existingPath, newPath) => fs.link(existingPath, newPath),
};
