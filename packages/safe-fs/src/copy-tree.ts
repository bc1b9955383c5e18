/**
 * Copying a directory tree between two open directories of one base, for a clone: every lookup is
 * relative to an open descriptor and never follows a link, so a workload changing its volume during
 * the copy cannot make it read or write outside the two trees. Symbolic links are copied as links
 * (their text, never their target), regular files by the kernel (`copy_file_range`, a reflink where
 * the file system has them) from an opened descriptor, hard links stay hard links, and modes and
 * owners are kept. FIFOs, sockets and devices cannot be made from Node.js (no `mknod`): they are
 * skipped or refused, as the caller says. Files and links are copied {@link copyConcurrency} at a
 * time while directories are walked one by one (see `bounded-tasks.ts`).
 */

import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { copyFile, lchown, readlink, symlink } from 'node:fs/promises';
import { BoundedTasks, type TaskGroup } from './bounded-tasks.ts';
import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { SafeFsError, systemError } from './errors.ts';
import type { WriteGuard } from './write-guard.ts';

/** What a clone's copy does with FIFOs, sockets and device files: leave them out, or fail. */
export type SpecialFilePolicy = 'skip' | 'refuse';

/** Options of the copy of a clone (`VolumeRoot.cloneVolume`). */
export interface CopyTreeOptions {
  /** Default `refuse`: a clone that cannot be exact fails instead of silently differing. */
  readonly specialFiles?: SpecialFilePolicy | undefined;
  /** Stops the copy at the next entry; the partial target is the caller's to remove. */
  readonly signal?: AbortSignal | undefined;
  /** Called after every 1000 entries (`progressEvery`) and at the end. */
  readonly onProgress?: ((progress: CopyProgress) => void) | undefined;
  /**
   * Checked before each write the descriptors' table does not see (file data, links); the caller's
   * handles carry the check for the rest (see {@link WriteGuard}).
   */
  readonly beforeEachWrite?: WriteGuard | undefined;
  /** Deeper trees are refused (each level holds two descriptors). Default 1024. */
  readonly maxDepth?: number | undefined;
}

/** How far a copy has come. */
export interface CopyProgress {
  readonly entries: number;
  readonly bytes: number;
  /** Special files left out under `specialFiles: 'skip'`. */
  readonly skipped: number;
}

/** Entries between two progress reports. */
export const progressEvery = 1000;

/**
 * Files and links copied at once: enough to keep libuv's four threads and the disk's queue busy,
 * few enough that the descriptors held (two per file, two per directory holding one) stay small.
 */
export const copyConcurrency = 16;

interface CopyState {
  readonly options: CopyTreeOptions;
  /** The target's top, from which first copies of hard-linked files are named. */
  readonly targetRoot: DirectoryHandle;
  /**
   * First copy of each hard-linked source file (`dev:ino`), relative to the target's top, once made;
   * `undefined` when that entry vanished. Set when a copy starts, so a later name of the same file
   * waits for it instead of copying the data again.
   */
  readonly linked: Map<string, Promise<Buffer | undefined>>;
  readonly tasks: BoundedTasks;
  entries: number;
  bytes: number;
  skipped: number;
}

/**
 * Copies everything in `source` into `target` (an empty directory the caller made), then applies
 * `source`'s mode and owner to `target`. Directories get their mode last, so a read-only one is still
 * filled.
 *
 * @throws {@link SafeFsError}: `io` for a special file under `refuse`, an entry that changed type
 * while being copied, or a tree deeper than `maxDepth`; `permission` for an unreadable entry;
 * the signal's reason when aborted.
 */
export async function copyTree(
  source: DirectoryHandle,
  target: DirectoryHandle,
  options: CopyTreeOptions = {},
): Promise<CopyProgress> {
  const state: CopyState = {
    options,
    targetRoot: target,
    linked: new Map(),
    tasks: new BoundedTasks(copyConcurrency),
    entries: 0,
    bytes: 0,
    skipped: 0,
  };
  await copyLevel(source, target, Buffer.alloc(0), 0, state);
  await applyAttributes(target, await source.stat());
  const progress = { entries: state.entries, bytes: state.bytes, skipped: state.skipped };
  options.onProgress?.(progress);
  return progress;
}

function raw(name: EntryName): Buffer {
  return typeof name === 'string' ? Buffer.from(name) : name;
}

function join(prefix: Buffer, name: EntryName): Buffer {
  return prefix.length === 0 ? raw(name) : Buffer.concat([prefix, Buffer.from('/'), raw(name)]);
}

function refused(path: string, detail: string): SafeFsError {
  return new SafeFsError({ kind: 'io', path, operation: 'copy', detail });
}

function throwIfStopped(state: CopyState): void {
  state.options.signal?.throwIfAborted();
  state.tasks.throwIfFailed();
}

function counted(state: CopyState): void {
  state.entries++;
  if (state.entries % progressEvery === 0) {
    state.options.onProgress?.({ entries: state.entries, bytes: state.bytes, skipped: state.skipped });
  }
}

/** `lstat` of every name, several at once; `undefined` for names removed meanwhile. */
async function lstatAll(
  source: DirectoryHandle,
  names: EntryName[],
  state: CopyState,
): Promise<(Stats | undefined)[]> {
  const stats = new Array<Stats | undefined>(names.length);
  const group = state.tasks.group();
  try {
    for (const [index, name] of names.entries()) {
      await group.start(async () => {
        stats[index] = await source.lstat(name);
      });
    }
  } finally {
    await group.settled();
  }
  state.tasks.throwIfFailed();
  return stats;
}

async function copyLevel(
  source: DirectoryHandle,
  target: DirectoryHandle,
  prefix: Buffer,
  depth: number,
  state: CopyState,
): Promise<void> {
  const maxDepth = state.options.maxDepth ?? 1024;
  if (depth >= maxDepth) throw refused(source.path, `is more than ${maxDepth} directories deep`);
  const names = await source.readdir();
  const stats = await lstatAll(source, names, state);
  const group = state.tasks.group();
  try {
    for (const [index, name] of names.entries()) {
      throwIfStopped(state);
      const entry = stats[index];
      if (entry === undefined) continue; // Removed by the workload meanwhile: a copy of a live volume.
      await copyEntry(source, target, name, entry, join(prefix, name), depth, state, group);
    }
  } finally {
    // The tasks use this level's descriptors, which the caller closes once this returns.
    await group.settled();
  }
  state.tasks.throwIfFailed();
}

async function copyEntry(
  source: DirectoryHandle,
  target: DirectoryHandle,
  name: EntryName,
  stats: Stats,
  relative: Buffer,
  depth: number,
  state: CopyState,
  group: TaskGroup,
): Promise<void> {
  if (stats.isDirectory()) {
    await copyDirectory(source, target, name, relative, depth, state);
    counted(state);
  } else if (stats.isFile()) {
    await group.start(async () => {
      await copyFileEntry({ source, target, name, stats, relative }, state);
      counted(state);
    });
  } else if (stats.isSymbolicLink()) {
    await group.start(async () => {
      state.options.signal?.throwIfAborted();
      await copySymlink(source, target, name, stats, state.options.beforeEachWrite);
      counted(state);
    });
  } else if (state.options.specialFiles === 'skip') {
    state.skipped++;
    counted(state);
  } else {
    throw refused(
      source.pathOf(name),
      'is a FIFO, socket or device file, which cannot be copied; the class can skip them (cloneSpecialFiles: skip)',
    );
  }
}

async function copyDirectory(
  source: DirectoryHandle,
  target: DirectoryHandle,
  name: EntryName,
  relative: Buffer,
  depth: number,
  state: CopyState,
): Promise<void> {
  const from = await source.openDirectory(name);
  if (from === undefined) return;
  try {
    await target.mkdir(name, 0o700);
    const to = await target.openDirectory(name);
    if (to === undefined) throw refused(target.pathOf(name), 'vanished while being copied into');
    try {
      await copyLevel(from, to, relative, depth + 1, state);
      await applyAttributes(to, await from.stat());
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

/** Owner, then mode (chown clears set-id bits), of the open directory `dir`. */
async function applyAttributes(dir: DirectoryHandle, stats: Stats): Promise<void> {
  await dir.setAttributes(stats.mode & 0o7777, stats.uid, stats.gid);
}

/** A regular file to copy: `name` in `source`, as `lstat` saw it, to `name` in `target`. */
interface FileEntry {
  readonly source: DirectoryHandle;
  readonly target: DirectoryHandle;
  readonly name: EntryName;
  readonly stats: Stats;
  /** Relative to the target's top. */
  readonly relative: Buffer;
}

/**
 * Copies a regular file, or links it to the first copy of the same source file. Must be called in the
 * order the walk meets the names: it claims a hard-linked file before its first await.
 */
async function copyFileEntry(entry: FileEntry, state: CopyState): Promise<void> {
  if (entry.stats.nlink <= 1) {
    state.options.signal?.throwIfAborted();
    await copyFileData(entry, state);
    return;
  }
  const key = `${entry.stats.dev}:${entry.stats.ino}`;
  const copy = linkOrCopy(state.linked.get(key), entry, state);
  state.linked.set(key, copy);
  await copy;
}

/** Links the entry to the copy `earlier` makes, or copies it when there is none. */
async function linkOrCopy(
  earlier: Promise<Buffer | undefined> | undefined,
  entry: FileEntry,
  state: CopyState,
): Promise<Buffer | undefined> {
  const first = await earlier;
  state.options.signal?.throwIfAborted();
  if (first !== undefined) {
    await state.targetRoot.linkInto(first, entry.target, entry.name);
    return first;
  }
  return (await copyFileData(entry, state)) ? entry.relative : undefined;
}

/** Copies the data, owner and mode of a regular file; false when it vanished meanwhile. */
async function copyFileData({ source, target, name, stats }: FileEntry, state: CopyState): Promise<boolean> {
  const text = source.pathOf(name);
  // O_NONBLOCK: a FIFO swapped in after the lstat must not hang the copy; fstat then refuses it.
  const from = await source.openExistingFile(name, constants.O_RDONLY | constants.O_NONBLOCK);
  if (from === undefined) return false;
  try {
    const opened = await from.stat();
    if (!opened.isFile() || opened.ino !== stats.ino) throw refused(text, 'changed while being copied');
    state.options.beforeEachWrite?.();
    // COPYFILE_EXCL creates the copy with O_EXCL, which never follows a link at the final name (like
    // openFile), with the source's mode; the source is read from the descriptor checked above.
    await copyFile(`/proc/self/fd/${from.fd}`, target.procPath(name), constants.COPYFILE_EXCL).catch(
      (err: unknown) => {
        throw systemError(err, 'copy', target.pathOf(name));
      },
    );
    state.options.beforeEachWrite?.();
    await lchown(target.procPath(name), opened.uid, opened.gid).catch((err: unknown) => {
      throw systemError(err, 'lchown', target.pathOf(name));
    });
    // chown clears set-id bits: set them again, through a descriptor (there is no lchmod).
    if ((opened.mode & 0o6000) !== 0) await setMode(target, name, opened.mode & 0o7777);
    state.bytes += opened.size;
  } finally {
    await from.close();
  }
  return true;
}

async function setMode(dir: DirectoryHandle, name: EntryName, mode: number): Promise<void> {
  const file = await dir.openFile(name, constants.O_RDONLY);
  try {
    await file.chmod(mode);
  } finally {
    await file.close();
  }
}

async function copySymlink(
  source: DirectoryHandle,
  target: DirectoryHandle,
  name: EntryName,
  stats: Stats,
  guard: WriteGuard | undefined,
): Promise<void> {
  // readlink reads the link itself, symlink writes the text as it is: neither resolves it.
  const text = await readlink(source.procPath(name), { encoding: 'buffer' }).catch((err: unknown) => {
    throw systemError(err, 'readlink', source.pathOf(name));
  });
  guard?.();
  await symlink(text, target.procPath(name)).catch((err: unknown) => {
    throw systemError(err, 'symlink', target.pathOf(name));
  });
  guard?.();
  await lchown(target.procPath(name), stats.uid, stats.gid).catch((err: unknown) => {
    throw systemError(err, 'lchown', target.pathOf(name));
  });
}
