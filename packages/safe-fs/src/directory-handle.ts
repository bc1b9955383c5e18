/**
 * An open directory through which every further lookup goes. Names are resolved as
 * `/proc/self/fd/<fd>/<name>`: the kernel starts from the directory the descriptor points at, so a
 * component that was checked once cannot be swapped for a symlink afterwards (openat semantics,
 * which Node.js lacks). Only the final name is looked up, and every call used either does not follow
 * a final symlink (`mkdir`, `rmdir`, `unlink`, `rename`, `link`, `symlink`, `readlink`, `lstat`) or passes
 * `O_NOFOLLOW`.
 */

import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { DirectoryStream, listingBatch } from './directory-stream.ts';
import { type EntryName, entryName, nameText } from './entry-name.ts';
import { errnoCode, SafeFsError, systemError } from './errors.ts';
import type { FsFile, FsOps, FsPath } from './fs-ops.ts';

export { type EntryName, nameText } from './entry-name.ts';

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// Linux's O_PATH (the same on every architecture Node runs on there), which `fs.constants` lacks.
const pathOnlyFlag = 0o10000000;

/** Device and inode: what a directory is, whatever it is called. */
export interface Identity {
  readonly dev: number;
  readonly ino: number;
}

/** Whether `a` and `b` are the same file. */
export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** An open directory below (or at) the base, known by its path relative to the base. */
export class DirectoryHandle {
  /** Relative to the base; `.` for the base. */
  readonly path: string;
  readonly #fs: FsOps;
  readonly #handle: FsFile;

  constructor(fs: FsOps, handle: FsFile, path: string) {
    this.#fs = fs;
    this.#handle = handle;
    this.path = path;
  }

  /** The relative path of `name` inside this directory. */
  pathOf(name: EntryName): string {
    const text = nameText(name);
    return this.path === '.' ? text : `${this.path}/${text}`;
  }

  /**
   * `/proc/self/fd/<fd>/<name>` (the directory itself without `name`), for the calls the table lacks
   * (`copyFile`, and `readlink`/`symlink` of raw bytes): like the table's, they must look up only the final name and
   * not follow it.
   */
  procPath(name?: EntryName): FsPath {
    return this.#at(name);
  }

  #at(name?: EntryName): FsPath {
    const self = `/proc/self/fd/${this.#handle.fd}`;
    if (name === undefined) return self;
    return typeof name === 'string' ? `${self}/${name}` : Buffer.concat([Buffer.from(`${self}/`), name]);
  }

  async #call<T>(operation: string, name: EntryName | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw systemError(err, operation, name === undefined ? this.path : this.pathOf(name));
    }
  }

  /**
   * Opens the subdirectory `name`, refusing a symlink or non-directory; `undefined` when absent.
   * `pathOnly` opens it `O_PATH`: lookups, `fstat`, listings (which open it again through
   * `/proc/self/fd`) and attribute changes work, and over NFS the open costs no GETATTR of its own,
   * where a directory that is listed right away would be revalidated twice.
   */
  async openDirectory(name: EntryName, pathOnly = false): Promise<DirectoryHandle | undefined> {
    try {
      const handle = await this.#fs.open(
        this.#at(name),
        pathOnly ? directoryFlags | pathOnlyFlag : directoryFlags,
      );
      return new DirectoryHandle(this.#fs, handle, this.pathOf(name));
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        throw nonDirectoryError(this.pathOf(name), await this.lstat(name), err);
      }
      throw systemError(err, 'open', this.pathOf(name));
    }
  }

  /** `lstat` of `name`; `undefined` when absent. */
  async lstat(name: EntryName): Promise<Stats | undefined> {
    try {
      return await this.#fs.lstat(this.#at(name));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw systemError(err, 'lstat', this.pathOf(name));
    }
  }

  /**
   * Opens a listing of this directory read `batchSize` names at a time: what a walk uses, since a
   * directory's width is up to the workload (see `directory-stream.ts`).
   */
  async stream(batchSize: number = listingBatch): Promise<DirectoryStream> {
    const listing = await this.#call('readdir', undefined, () => this.#fs.opendir(this.#at(), batchSize));
    return new DirectoryStream(listing, this.path, batchSize);
  }

  /**
   * The names in this directory, exactly as stored (see {@link EntryName}), all at once: only for
   * directories whose width this package controls; {@link stream} for anything a workload can fill.
   */
  async readdir(): Promise<EntryName[]> {
    const names = await this.#call('readdir', undefined, () => this.#fs.readdir(this.#at()));
    return names.map(entryName);
  }

  /**
   * Resolves when this process has `mode` (`constants.W_OK`…) on this directory itself, or when the
   * system calls cannot tell (no `access`); rejects with a {@link SafeFsError} otherwise.
   */
  async checkAccess(mode: number): Promise<void> {
    if (this.#fs.access === undefined) return;
    await this.#call('access', undefined, async () => this.#fs.access?.(this.#at(), mode));
  }

  /** `fstat` of this directory itself. */
  stat(): Promise<Stats> {
    return this.#call('fstat', undefined, () => this.#fs.fstat(this.#handle));
  }

  mkdir(name: EntryName, mode: number): Promise<void> {
    return this.#call('mkdir', name, () => this.#fs.mkdir(this.#at(name), mode));
  }

  rmdir(name: EntryName): Promise<void> {
    return this.#call('rmdir', name, () => this.#fs.rmdir(this.#at(name)));
  }

  unlink(name: EntryName): Promise<void> {
    return this.#call('unlink', name, () => this.#fs.unlink(this.#at(name)));
  }

  /** Renames `from` to `to`, both in this directory. */
  rename(from: string, to: string): Promise<void> {
    return this.#call('rename', from, () => this.#fs.rename(this.#at(from), this.#at(to)));
  }

  /**
   * Renames `from` in this directory to `to` in directory `target` (same file system): `rename(2)`
   * replaces an empty directory `to`, and fails with `ENOTEMPTY` rather than replace one with data.
   */
  renameInto(from: string, target: DirectoryHandle, to: string): Promise<void> {
    return this.#call('rename', from, () => this.#fs.rename(this.#at(from), target.#at(to)));
  }

  /**
   * Hard-links `from` (a path below this directory, of directories nobody else can change) as `to`
   * in directory `target`; fails with `EEXIST` rather than replace.
   */
  linkInto(from: Buffer, target: DirectoryHandle, to: EntryName): Promise<void> {
    return this.#call('link', from, () => this.#fs.link(this.#at(from), target.#at(to)));
  }

  /** Hard-links `from` as `to`, both in this directory; fails with `EEXIST` rather than replace. */
  link(from: string, to: string): Promise<void> {
    return this.#call('link', to, () => this.#fs.link(this.#at(from), this.#at(to)));
  }

  /**
   * Creates symbolic link `name` holding `target`, a text this package stores, never a path it
   * follows; fails with `EEXIST` rather than replace.
   */
  symlink(target: string, name: EntryName): Promise<void> {
    return this.#call('symlink', name, () => this.#fs.symlink(target, this.#at(name)));
  }

  /**
   * The text symbolic link `name` holds; `undefined` when absent, without building an error for that
   * common answer. Rejects with `EINVAL` when `name` is not a symbolic link.
   */
  async readLink(name: EntryName): Promise<string | undefined> {
    try {
      return await this.#fs.readlink(this.#at(name));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw systemError(err, 'readlink', this.pathOf(name));
    }
  }

  /** Opens file `name` without following a symlink. */
  openFile(name: EntryName, flags: number, mode?: number): Promise<FsFile> {
    return this.#call('open', name, () => this.#fs.open(this.#at(name), flags | constants.O_NOFOLLOW, mode));
  }

  /**
   * Opens existing file `name` without following a symlink; `undefined` when absent, without
   * building an error for that common answer.
   */
  async openExistingFile(name: EntryName, flags: number): Promise<FsFile | undefined> {
    try {
      return await this.#fs.open(this.#at(name), flags | constants.O_NOFOLLOW);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw systemError(err, 'open', this.pathOf(name));
    }
  }

  /** Sets owner (when given) and then mode of this directory itself, through its descriptor. */
  async setAttributes(mode: number, uid: number | undefined, gid: number | undefined): Promise<void> {
    if (uid !== undefined || gid !== undefined) {
      await this.#call('chown', undefined, () => this.#fs.fchown(this.#handle, uid ?? -1, gid ?? -1));
    }
    // After chown, which may clear set-id bits.
    await this.#call('chmod', undefined, () => this.#fs.fchmod(this.#handle, mode));
  }

  close(): Promise<void> {
    return this.#handle.close();
  }
}

/**
 * Opens the base directory. The base is configuration, not tenant input, so symlinks in it are
 * followed (`/persistentvolumes` may itself be a link); everything below it is not. `pathOnly` opens
 * it `O_PATH` (see {@link DirectoryHandle.openDirectory}): over NFS such an open is not revalidated
 * (no GETATTR), so the names below it are then looked up as the client last knew the base.
 */
export async function openBase(fs: FsOps, base: string, pathOnly = false): Promise<DirectoryHandle> {
  if (process.platform !== 'linux') {
    throw new SafeFsError({
      kind: 'io',
      path: '.',
      operation: 'open',
      detail: `needs Linux /proc/self/fd for symlink-safe lookups, not ${process.platform}`,
    });
  }
  try {
    const flags = constants.O_RDONLY | constants.O_DIRECTORY;
    const handle = await fs.open(base, pathOnly ? flags | pathOnlyFlag : flags);
    return new DirectoryHandle(fs, handle, '.');
  } catch (err) {
    throw systemError(err, 'open', '.');
  }
}

/** The refusal for `path`, found to be a symlink or another non-directory where a directory must be. */
export function nonDirectoryError(path: string, stats: Stats | undefined, cause?: unknown): SafeFsError {
  const symlink = stats?.isSymbolicLink() === true;
  return new SafeFsError({
    kind: symlink ? 'symlink' : 'not-a-directory',
    path,
    operation: 'open',
    detail: symlink ? 'is a symbolic link, refusing to follow it' : 'is not a directory',
    errno: errnoCode(cause),
    cause,
  });
}

/** Whether `err` says the entry is already gone. */
export function isMissing(err: unknown): boolean {
  return errnoCode(err) === 'ENOENT';
}
