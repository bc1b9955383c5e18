/**
 * Copying a directory tree between two open directories of one base, for a clone: every lookup is
 * relative to an open descriptor and never follows a link, so a workload changing its volume during
 * the copy cannot make it read or write outside the two trees. Symbolic links are copied as links
 * (their text, never their target), regular files shared copy-on-write where the file system can
 * (`extent-sharing.ts`), else by a loop of our own, chunk by chunk, keeping holes (`copy-file.ts`: it
 * ends at end of file, stops between chunks, and holds a bounded share of libuv's thread pool), hard links stay hard links, and modes and owners are kept, a directory's mode set once
 * everything inside it is made. FIFOs, sockets and devices cannot be made from Node.js (no `mknod`):
 * they are skipped or refused, as the caller says. Files and links are copied {@link copyConcurrency}
 * at a time, the data of at most `fileDataConcurrency` of those files at once, while directories are
 * walked one by one (see `bounded-tasks.ts`).
 *
 * Memory does not grow with the width of a directory nor, beyond a few hundred bytes a level, with
 * its depth: each directory is listed in batches and `lstat`ed batch by batch through an explicit
 * stack of source/target levels (`copy-levels.ts`), at most `maxOpenLevels` of which hold
 * descriptors; a task group keeps only its running tasks; hard links are found again through a
 * directory of links inside the target (named after the source's device and inode, removed before
 * the copy returns), not through paths kept in memory. The workload may change the source meanwhile:
 * an entry gone by its `lstat` or open is left out, a name listed twice is copied once, a directory
 * swapped for a link or a file is refused (never followed), and a subtree moved while its level was
 * closed fails the copy rather than being climbed out of.
 */

import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lchown, readlink, symlink } from 'node:fs/promises';
import { BoundedTasks } from './bounded-tasks.ts';
import { copyRegularFile, FileDataSlots, type FileToCopy } from './copy-file.ts';
import { CopyLevels } from './copy-levels.ts';
import { type DirectoryHandle, type EntryName, isMissing } from './directory-handle.ts';
import { errnoCode, SafeFsError, systemError } from './errors.ts';
import { ExtentSharing, type ReflinkPolicy } from './extent-sharing.ts';
import { emptyDirectory } from './remove-tree.ts';
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
  /**
   * Directories nested deeper (below the source's top) are refused, failing the copy. Default 150 000:
   * descriptors stay bounded however deep the tree, but each level costs a few hundred bytes of
   * memory while the copy is below it.
   */
  readonly maxDepth?: number | undefined;
  /**
   * Default `auto`: regular files share their extents with the source where the file system can
   * (XFS with `reflink=1`, btrfs), probed on the first file of each source device; elsewhere, and
   * under `never`, their bytes are copied.
   */
  readonly reflink?: ReflinkPolicy | undefined;
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

/**
 * The depth of the deepest tree a copy accepts unless told otherwise: half as deep again as the
 * 100 000 levels a clone must handle. Each level costs ~300 bytes of heap while the copy is below it
 * (`copy-levels.ts`): 45 MiB at this depth, inside the provisioner's 384Mi limit beside its other work.
 */
const defaultMaxDepth = 150_000;

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
  /** The target's top, where the directory of hard links is made. */
  readonly targetRoot: DirectoryHandle;
  /**
   * The directory, inside the target's top, holding a link to the first copy of each hard-linked
   * source file, named after the source's `dev-ino`: a later name of the same file is linked from
   * there, by a short path whatever the depth of either, and nothing per file stays in memory. Made
   * when the first hard-linked file is met, removed before the copy returns.
   */
  hardLinks: Promise<HardLinks> | undefined;
  /**
   * Hard-linked source files (`dev-ino`) whose copy or link is under way: a later name of the same
   * file waits for it instead of copying the data again. Only tasks in flight are here.
   */
  readonly linking: Map<string, Promise<void>>;
  readonly tasks: BoundedTasks;
  readonly fileData: FileDataSlots;
  readonly sharing: ExtentSharing;
  entries: number;
  bytes: number;
  skipped: number;
}

interface HardLinks {
  readonly name: string;
  readonly dir: DirectoryHandle;
}

/**
 * Copies everything in `source` into `target` (an empty directory the caller made), then applies
 * `source`'s mode and owner to `target`. Directories get their mode last, so a read-only one is still
 * filled. Entries that vanish while being copied are left out; a name listed twice (its directory
 * changing while listed) is copied once.
 *
 * @throws {@link SafeFsError}: `io` for a special file under `refuse`, an entry that changed type
 * while being copied, a directory moved while its level was closed, or a tree deeper than
 * `maxDepth`; `symlink` or `not-a-directory` for a directory swapped for one; `permission` for an
 * unreadable entry; the signal's reason when aborted.
 */
export async function copyTree(
  source: DirectoryHandle,
  target: DirectoryHandle,
  options: CopyTreeOptions = {},
): Promise<CopyProgress> {
  const state: CopyState = {
    options,
    targetRoot: target,
    hardLinks: undefined,
    linking: new Map(),
    tasks: new BoundedTasks(copyConcurrency),
    fileData: new FileDataSlots(),
    sharing: new ExtentSharing(options.reflink),
    entries: 0,
    bytes: 0,
    skipped: 0,
  };
  try {
    const levels = await CopyLevels.of(source, target, state.tasks);
    try {
      await copyLevels(levels, state);
    } finally {
      // Also waits for every task still in flight after a failure.
      await levels.close();
    }
    await removeHardLinks(state);
  } finally {
    await closeHardLinks(state);
  }
  await applyAttributes(target, await source.stat());
  const progress = { entries: state.entries, bytes: state.bytes, skipped: state.skipped };
  options.onProgress?.(progress);
  return progress;
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

/** Whether `err` says the name exists in the target already: it was listed twice, and copied once. */
function listedTwice(err: unknown): boolean {
  return errnoCode(err) === 'EEXIST';
}

/** The depth-first walk: one entry at a time, files and links handed to the task pool. */
async function copyLevels(levels: CopyLevels, state: CopyState): Promise<void> {
  const maxDepth = state.options.maxDepth ?? defaultMaxDepth;
  // The error names the volume, not the directory past the limit: its path is that long.
  const top = levels.source.path;
  for (;;) {
    throwIfStopped(state);
    const entry = await levels.next();
    if (entry === undefined) {
      await levels.settle();
      if (levels.depth === 0) return;
      // Mode last, once everything inside is made.
      await applyAttributes(levels.target, await levels.source.stat());
      await levels.leave();
      counted(state);
      continue;
    }
    const { name, stats } = entry;
    if (stats === undefined) continue; // Removed by the workload meanwhile: a copy of a live volume.
    if (stats.isDirectory()) {
      if (levels.depth + 1 > maxDepth) {
        throw refused(
          top,
          `has a directory nested more than ${maxDepth} directories deep, which a clone refuses`,
        );
      }
      await enterDirectory(levels, name);
    } else {
      await copyEntry(levels, name, stats, state);
    }
  }
}

/** Makes and enters the copy of directory `name` of the deepest level, unless it vanished. */
async function enterDirectory(levels: CopyLevels, name: EntryName): Promise<void> {
  const from = await levels.source.openDirectory(name);
  if (from === undefined) return;
  let to: DirectoryHandle | undefined;
  try {
    await levels.target.mkdir(name, 0o700);
    to = await levels.target.openDirectory(name);
    if (to === undefined) throw refused(levels.target.pathOf(name), 'vanished while being copied into');
  } catch (err) {
    await from.close();
    if (listedTwice(err)) return;
    throw err;
  }
  await levels.enter(name, from, to);
}

function copyEntry(levels: CopyLevels, name: EntryName, stats: Stats, state: CopyState): Promise<void> {
  const { source, target } = levels;
  if (stats.isFile()) {
    return startCopy(levels, state, () => copyFileEntry({ source, target, name, stats }, state));
  }
  if (stats.isSymbolicLink()) {
    return startCopy(levels, state, async () => {
      state.options.signal?.throwIfAborted();
      await copySymlink(source, target, name, stats, state.options.beforeEachWrite);
    });
  }
  if (state.options.specialFiles === 'skip') {
    state.skipped++;
    counted(state);
    return Promise.resolve();
  }
  throw refused(
    source.pathOf(name),
    'is a FIFO, socket or device file, which cannot be copied; the class can skip them (cloneSpecialFiles: skip)',
  );
}

/** Starts `copy` in the deepest level's group, once the pool has a free slot. */
function startCopy(levels: CopyLevels, state: CopyState, copy: () => Promise<void>): Promise<void> {
  return levels.group.start(async () => {
    try {
      await copy();
    } catch (err) {
      if (listedTwice(err)) return;
      throw err;
    }
    counted(state);
  });
}

/** Owner, then mode (chown clears set-id bits), of the open directory `dir`. */
async function applyAttributes(dir: DirectoryHandle, stats: Stats): Promise<void> {
  await dir.setAttributes(stats.mode & 0o7777, stats.uid, stats.gid);
}

/**
 * Copies a regular file, or links it to the first copy of the same source file. Must be called in the
 * order the walk meets the names: it claims a hard-linked file before its first await.
 */
async function copyFileEntry(entry: FileToCopy, state: CopyState): Promise<void> {
  if (entry.stats.nlink <= 1) {
    state.options.signal?.throwIfAborted();
    await copyFileData(entry, state);
    return;
  }
  const key = `${entry.stats.dev}-${entry.stats.ino}`;
  const copy = linkOrCopy(state.linking.get(key), key, entry, state);
  state.linking.set(key, copy);
  try {
    await copy;
  } finally {
    if (state.linking.get(key) === copy) state.linking.delete(key);
  }
}

/**
 * Once `earlier` (another name of the same file) is done, links the entry to the first copy, or
 * copies it when there is none yet (or the earlier names vanished) and keeps a link to the copy.
 */
async function linkOrCopy(
  earlier: Promise<void> | undefined,
  key: string,
  entry: FileToCopy,
  state: CopyState,
): Promise<void> {
  await earlier;
  state.options.signal?.throwIfAborted();
  const hardLinks = await openHardLinks(state);
  try {
    await hardLinks.dir.linkInto(Buffer.from(key), entry.target, entry.name);
    return;
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  if (await copyFileData(entry, state)) {
    await entry.target.linkInto(Buffer.from(raw(entry.name)), hardLinks.dir, key);
  }
}

function raw(name: EntryName): Buffer {
  return typeof name === 'string' ? Buffer.from(name) : name;
}

/** The directory of hard links, made and opened on first use. */
function openHardLinks(state: CopyState): Promise<HardLinks> {
  state.hardLinks ??= (async () => {
    // Random: no name a workload can give an entry of its volume's top collides with it.
    const name = `.kube-provisioner-links-${randomBytes(16).toString('hex')}`;
    await state.targetRoot.mkdir(name, 0o700);
    const dir = await state.targetRoot.openDirectory(name);
    if (dir === undefined) throw refused(state.targetRoot.pathOf(name), 'vanished while being copied into');
    return { name, dir };
  })();
  return state.hardLinks;
}

async function closeHardLinks(state: CopyState): Promise<void> {
  const hardLinks = await state.hardLinks?.catch(() => undefined);
  await hardLinks?.dir.close();
}

/** Removes the directory of hard links: its links go, the copies they point to stay. */
async function removeHardLinks(state: CopyState): Promise<void> {
  const hardLinks = await state.hardLinks;
  if (hardLinks === undefined) return;
  await emptyDirectory(hardLinks.dir);
  await state.targetRoot.rmdir(hardLinks.name);
}

/** Copies the data, owner and mode of a regular file; false when it vanished meanwhile. */
function copyFileData(entry: FileToCopy, state: CopyState): Promise<boolean> {
  return copyRegularFile(entry, state.fileData, {
    throwIfStopped: () => throwIfStopped(state),
    beforeEachWrite: state.options.beforeEachWrite,
    sharing: state.sharing,
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
    // Removed since its lstat: left out, as a vanished file is. No link any more: changed, as a file.
    if (isMissing(err)) return undefined;
    const path = source.pathOf(name);
    if (errnoCode(err) !== 'EINVAL') throw systemError(err, 'readlink', path);
    throw new SafeFsError({ kind: 'io', path, operation: 'copy', detail: 'changed while being copied' });
  });
  if (text === undefined) return;
  guard?.();
  await symlink(text, target.procPath(name)).catch((err: unknown) => {
    throw systemError(err, 'symlink', target.pathOf(name));
  });
  guard?.();
  await lchown(target.procPath(name), stats.uid, stats.gid).catch((err: unknown) => {
    throw systemError(err, 'lchown', target.pathOf(name));
  });
}
