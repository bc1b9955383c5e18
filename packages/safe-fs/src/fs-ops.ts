/**
 * The system calls {@link VolumeRoot} makes, as a replaceable table. {@link nodeFsOps} makes them on
 * libuv's thread pool, {@link localFsOps} on the calling thread; tests spread either and override one
 * entry to inject a failure (`fchmod` → `EACCES`) or a race (swap a directory for a symlink just
 * before `mkdir`) without mocking `node:fs`.
 */

import type { Stats } from 'node:fs';
import * as fsSync from 'node:fs';
import * as fs from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * A path as the calls receive it: `/proc/self/fd/<fd>/<name>`, a `Buffer` when `name` is not valid
 * UTF-8 (a workload may create such names, and they must still be removable).
 */
export type FsPath = string | Buffer;

/** An open file or directory: the calls made on it, as `node:fs/promises`' `FileHandle` has them. */
export interface FsFile {
  readonly fd: number;
  /** `fstat(2)`. */
  stat(): Promise<Stats>;
  /** `fchmod(2)`. */
  chmod(mode: number): Promise<void>;
  /** `fchown(2)`. */
  chown(uid: number, gid: number): Promise<void>;
  /** The whole file as UTF-8 text. */
  readFile(encoding: 'utf8'): Promise<string>;
  /** Writes `data` from the current position. */
  writeFile(data: string): Promise<void>;
  /** `fdatasync(2)`. */
  datasync(): Promise<void>;
  /** Closes the descriptor; closing again does nothing. */
  close(): Promise<void>;
}

/**
 * An open listing of a directory (`opendir(3)`), read in batches so that no directory is ever held
 * in memory whole, however many entries it has.
 */
export interface FsDirectory {
  /**
   * The next names, as raw bytes: as many as the batch size given to {@link FsOps.opendir}, fewer
   * only once the listing is done (none after that). Entries removed or added while the listing is
   * read may be missed or seen twice (`readdir(3)`).
   */
  read(): Promise<Buffer[]>;
  /** Closes the listing; closing again does nothing. */
  close(): Promise<void>;
}

/** Path-based calls receive `/proc/self/fd/<fd>/<name>` paths; see the package README. */
export interface FsOps {
  /** Opens `path` with `open(2)` flags, and `mode` when it creates the file. */
  open(path: FsPath, flags: number, mode?: number): Promise<FsFile>;
  /** Stats the open file (`fstat(2)`). */
  fstat(handle: FsFile): Promise<Stats>;
  /**
   * Sets the open file's permission bits (`fchmod(2)`). `handle` may be a directory opened path-only
   * (`O_PATH`), which `fchmod(2)` refuses with `EBADF`: then through `/proc/self/fd/<fd>`, which names
   * that very file (as glibc's `fchmodat` does).
   */
  fchmod(handle: FsFile, mode: number): Promise<void>;
  /** Sets the open file's owner and group (`fchown(2)`); a path-only `handle` as for {@link fchmod}. */
  fchown(handle: FsFile, uid: number, gid: number): Promise<void>;
  /** Creates one directory with `mode`; not recursive, and fails if the entry exists. */
  mkdir(path: FsPath, mode: number): Promise<void>;
  /**
   * Stats `path` without following a final symlink (`lstat(2)`). When nothing is there it may
   * resolve `undefined`, which builds no error for that common answer, or reject with `ENOENT`.
   */
  lstat(path: FsPath): Promise<Stats | undefined>;
  /** Entry names as raw bytes, so names that are not UTF-8 survive the round trip. */
  readdir(path: FsPath): Promise<Buffer[]>;
  /** Opens `path` to be listed in batches of `batchSize` names (`opendir(3)`). */
  opendir(path: FsPath, batchSize: number): Promise<FsDirectory>;
  /** Removes an empty directory. */
  rmdir(path: FsPath): Promise<void>;
  /** Removes a non-directory entry. */
  unlink(path: FsPath): Promise<void>;
  /** Renames `oldPath` to `newPath` (`rename(2)`). */
  rename(oldPath: FsPath, newPath: FsPath): Promise<void>;
  /** Creates `newPath` as a hard link to `existingPath`. */
  link(existingPath: FsPath, newPath: FsPath): Promise<void>;
  /** Creates symbolic link `path` holding `target` (`symlink(2)`); fails if the entry exists. */
  symlink(target: string, path: FsPath): Promise<void>;
  /** The text a symbolic link holds (`readlink(2)`); `EINVAL` when `path` is not a symbolic link. */
  readlink(path: FsPath): Promise<string>;
  /**
   * Checks this process's permission on `path` (`access(2)`, `constants.W_OK`…); over NFS the
   * server answers, so `root_squash` is seen. Optional: without it permissions are not checked
   * ahead of an operation.
   */
  access?(path: FsPath, mode: number): Promise<void>;
}

/** The real system calls, from `node:fs/promises`. */
export const nodeFsOps: FsOps = {
  open: (path, flags, mode) => fs.open(path, flags, mode),
  fstat: (handle) => handle.stat(),
  fchmod: (handle, mode) =>
    handle.chmod(mode).catch((err: unknown) => throughProc(err, handle, (path) => fs.chmod(path, mode))),
  fchown: (handle, uid, gid) =>
    handle
      .chown(uid, gid)
      .catch((err: unknown) => throughProc(err, handle, (path) => fs.chown(path, uid, gid))),
  mkdir: async (path, mode) => {
    await fs.mkdir(path, { mode });
  },
  lstat: (path) => fs.lstat(path),
  readdir: (path) => fs.readdir(path, { encoding: 'buffer' }),
  opendir: async (path, batchSize) =>
    new BatchedDirectory(await fs.opendir(path, dirOptions(batchSize)), batchSize, true),
  rmdir: (path) => fs.rmdir(path),
  unlink: (path) => fs.unlink(path),
  rename: (oldPath, newPath) => fs.rename(oldPath, newPath),
  link: (existingPath, newPath) => fs.link(existingPath, newPath),
  symlink: (target, path) => fs.symlink(target, path),
  readlink: (path) => fs.readlink(path, 'utf8'),
  access: (path, mode) => fs.access(path, mode),
};

/**
 * The same calls made synchronously on the calling thread, for local file systems, except
 * `fdatasync`, which waits for the disk and stays on the thread pool. There each other call takes
 * microseconds, while a thread-pool round trip (queue, wake a worker, wake the event loop)
 * costs several times the call itself: creating a volume takes ~0.8 ms of CPU this way and ~4 ms
 * through {@link nodeFsOps} (`docs/benchmarks.md`). Never for network file systems: a call stuck on
 * an unresponsive server would stop the event loop, and with it lease renewal.
 */
export const localFsOps: FsOps = {
  open: async (path, flags, mode) => new LocalFile(fsSync.openSync(path, flags, mode)),
  fstat: (handle) => handle.stat(),
  fchmod: (handle, mode) => handle.chmod(mode),
  fchown: (handle, uid, gid) => handle.chown(uid, gid),
  mkdir: async (path, mode) => {
    fsSync.mkdirSync(path, { mode });
  },
  lstat: async (path) => fsSync.lstatSync(path, { throwIfNoEntry: false }),
  readdir: async (path) => fsSync.readdirSync(path, { encoding: 'buffer' }),
  opendir: async (path, batchSize) =>
    new BatchedDirectory(fsSync.opendirSync(path, dirOptions(batchSize)), batchSize, false),
  rmdir: async (path) => fsSync.rmdirSync(path),
  unlink: async (path) => fsSync.unlinkSync(path),
  rename: async (oldPath, newPath) => fsSync.renameSync(oldPath, newPath),
  link: async (existingPath, newPath) => fsSync.linkSync(existingPath, newPath),
  symlink: async (target, path) => fsSync.symlinkSync(target, path),
  readlink: async (path) => fsSync.readlinkSync(path, 'utf8'),
  access: async (path, mode) => fsSync.accessSync(path, mode),
};

const fdatasync = promisify(fsSync.fdatasync);

/**
 * `call` on `/proc/self/fd/<fd>` of `handle` when `err` is the `EBADF` of an `f*` call on a path-only
 * (`O_PATH`) descriptor: that link resolves to the descriptor's own file, never by name. Else `err`.
 */
async function throughProc(
  err: unknown,
  handle: FsFile,
  call: (path: string) => Promise<void>,
): Promise<void> {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'EBADF' || handle.fd === -1) throw err;
  await call(`/proc/self/fd/${handle.fd}`);
}

/**
 * `opendir` options: names as bytes (the types know only text encodings, but `Dir` passes any
 * encoding on to `readdir(3)`'s conversion, `buffer` included), and libuv's buffer the size of a batch
 * so that a batch is one trip to the thread pool.
 */
function dirOptions(batchSize: number): fsSync.OpenDirOptions {
  return { encoding: 'buffer' as BufferEncoding, bufferSize: batchSize };
}

/** The name of an entry of a `Dir` opened with {@link dirOptions}: bytes, whatever the types say. */
function rawName(entry: fsSync.Dirent): Buffer {
  return entry.name as unknown as Buffer;
}

/**
 * A listing read `batchSize` names at a time: {@link nodeFsOps} reads through `Dir.read` (libuv fills
 * a buffer on its thread pool), {@link localFsOps} through `Dir.readSync` on the calling thread.
 */
class BatchedDirectory implements FsDirectory {
  readonly #dir: fsSync.Dir;
  readonly #batchSize: number;
  readonly #onPool: boolean;
  #closed = false;

  constructor(dir: fsSync.Dir, batchSize: number, onPool: boolean) {
    this.#dir = dir;
    this.#batchSize = batchSize;
    this.#onPool = onPool;
  }

  async read(): Promise<Buffer[]> {
    const names: Buffer[] = [];
    while (!this.#closed && names.length < this.#batchSize) {
      const entry = this.#onPool ? await this.#dir.read() : this.#dir.readSync();
      if (entry === null) break;
      names.push(rawName(entry));
    }
    return names;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#onPool) await this.#dir.close();
    else this.#dir.closeSync();
  }
}

/** A file descriptor of {@link localFsOps}; closing twice is a no-op, as for `FileHandle`. */
class LocalFile implements FsFile {
  #fd: number;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** -1 once closed, as `FileHandle.fd`. */
  get fd(): number {
    return this.#fd;
  }

  async stat(): Promise<Stats> {
    return fsSync.fstatSync(this.fd);
  }

  async chmod(mode: number): Promise<void> {
    try {
      fsSync.fchmodSync(this.fd, mode);
    } catch (err) {
      await throughProc(err, this, async (path) => fsSync.chmodSync(path, mode));
    }
  }

  async chown(uid: number, gid: number): Promise<void> {
    try {
      fsSync.fchownSync(this.fd, uid, gid);
    } catch (err) {
      await throughProc(err, this, async (path) => fsSync.chownSync(path, uid, gid));
    }
  }

  async readFile(encoding: 'utf8'): Promise<string> {
    return fsSync.readFileSync(this.fd, encoding);
  }

  async writeFile(data: string): Promise<void> {
    fsSync.writeFileSync(this.fd, data);
  }

  /** On the thread pool: a flush waits for the disk, which the event loop must not. */
  datasync(): Promise<void> {
    return fdatasync(this.#fd);
  }

  async close(): Promise<void> {
    if (this.#fd === -1) return;
    const fd = this.#fd;
    this.#fd = -1;
    fsSync.closeSync(fd);
  }
}
