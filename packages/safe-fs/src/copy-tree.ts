/**
 * Copying a directory tree between two open directories of one base, for a clone: every lookup is
 * relative to an open descriptor and never follows a link, so a workload changing its volume during
 * the copy cannot make it read or write outside the two trees. Symbolic links are copied as links
 * (their text, never their target), regular files by a loop of our own, chunk by chunk, keeping holes
 * (`copy-file.ts`: it ends at end of file, stops between chunks, and holds a bounded share of libuv's
 * thread pool), hard links stay hard links, and modes and owners are kept. FIFOs, sockets and devices
 * cannot be made from Node.js (no `mknod`): they are skipped or refused, as the caller says. Files and
 * links are copied {@link copyConcurrency} at a time, the data of at most `fileDataConcurrency` of
 * those files at once, while directories are walked one by one (see `bounded-tasks.ts`).
 */

import type { Stats } from 'node:fs';
import { lchown, readlink, symlink } from 'node:fs/promises';
import { BoundedTasks, type TaskGroup } from './bounded-tasks.ts';
import { copyRegularFile, FileDataSlots } from './copy-file.ts';
import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { SafeFsError, systemError } from './errors.ts';
import type { WriteGuard } from './write-guard.ts';

/** What a clone's copy does with FIFOs, sockets and device files: leave them out, or fail. */
export type SpecialFilePolicy = 'skip' | 'refuse';

/** Options of the copy of a clone (`VolumeRoot.cloneVolume`). */
export interface CopyTreeOptions {
  /** Default `refuse`: a clone that cannot be exact fails instead of silently differing. */
  readonly specialFiles?: SpecialFilePolicy | undefined;
  /**
   * Stops the copy at the next entry or the next chunk of file data; the partial target is the
   * caller's to remove.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Called after every 1000 entries (`progressEvery`), after each chunk of file data written (at most
   * `chunkBytes`), and at the end.
   */
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
  /**
   * Bytes of file data written so far: what the copy allocates for data, holes left out (a sparse
   * file counts its data, not its size), hard links counted once. It grows chunk by chunk, so a limit
   * on it can stop a copy within a chunk of each file in flight.
   */
  readonly bytes: number;
  /** Special files left out under `specialFiles: 'skip'`. */
  readonly skipped: number;
}

/** Entries between two progress reports. */
export const progressEvery = 1000;

/**
 * Files and links copied at once: enough to keep the thread pool and the disk's queue busy with
 * lookups, links and attributes, few enough that the descriptors held (two per file, two per
 * directory holding one) stay small. Each task has one pool call in flight at a time, and the data of
 * only `fileDataConcurrency` files is copied at once (`copy-file.ts`).
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
  readonly fileData: FileDataSlots;
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
    fileData: new FileDataSlots(),
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

function reportProgress(state: CopyState): void {
  state.options.onProgress?.({ entries: state.entries, bytes: state.bytes, skipped: state.skipped });
}

function counted(state: CopyState): void {
  state.entries++;
  if (state.entries % progressEvery === 0) reportProgress(state);
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
function copyFileData(entry: FileEntry, state: CopyState): Promise<boolean> {
  return copyRegularFile(entry, state.fileData, {
    throwIfStopped: () => throwIfStopped(state),
    beforeEachWrite: state.options.beforeEachWrite,
    onWritten: (bytes) => {
      state.bytes += bytes;
      reportProgress(state);
    },
  });
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
