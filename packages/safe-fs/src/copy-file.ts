/**
 * Copying one regular file of a clone: opened without running anything a non-file's `open` would,
 * its data moved by a loop of our own, one chunk per thread-pool call, and its owner and mode kept.
 *
 * The loop replaces `fs.copyFile`, whose libuv implementation sends the size it saw at open and
 * treats a 0-byte `copy_file_range`/`sendfile` as progress, not as the end: a source truncated
 * during its copy kept a pool thread spinning for good, past any abort, and four of them stopped
 * every file-system call of the process. Here a 0-byte read ends the copy, the size seen at open
 * bounds it (a file that keeps growing cannot keep it going), the caller's stop check and write
 * guard run between chunks, and one file never holds a pool thread for longer than one chunk. Where
 * the file system can share extents, the file is cloned instead, in one atomic call
 * (`extent-sharing.ts`); the loop is the fallback.
 */

import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { type DirectoryHandle, type EntryName, sameIdentity } from './directory-handle.ts';
import { SafeFsError, systemError } from './errors.ts';
import type { ExtentSharing } from './extent-sharing.ts';
import type { WriteGuard } from './write-guard.ts';

/** Bytes read per thread-pool call: how long one file holds a pool thread at most. */
export const chunkBytes: number = 1024 * 1024;

/**
 * Files whose data one clone copies at once. Each has one read or write in libuv's pool at a time, so
 * a clone's data holds at most this many pool threads (two clones at once, the controller's limit,
 * four), and every other call of the process (a record's `fdatasync`, a provision, a usage scan)
 * still finds threads free; lookups, links and attributes run wider (`copyConcurrency`), as they are
 * short. Two keep the disk's queue busy while one chunk waits on the event loop.
 */
export const fileDataConcurrency = 2;

/**
 * Zero regions of this size, aligned in the file, are left out as holes: the block size of the file
 * systems volumes live on. Node.js has no `SEEK_DATA`/`SEEK_HOLE`, so holes are found by reading:
 * every zero block, a hole or written zeroes, becomes a hole in the copy.
 */
const holeBytes = 4096;
const zeroBlock = Buffer.alloc(holeBytes);

/**
 * Linux's `O_PATH` (Node.js does not export it): the descriptor names the file without opening it,
 * so a device's driver is not called and a FIFO does not wait for a writer.
 */
const pathOnly = (constants as { readonly O_PATH?: number }).O_PATH ?? 0o10000000;

/** How the copy of one file is stopped, fenced and counted. */
export interface FileCopyOptions {
  /** Called before the first chunk and between chunks; throwing stops the copy with that error. */
  readonly throwIfStopped: () => void;
  /** Checked before each write: creating the copy, each chunk's data, its length, owner and mode. */
  readonly beforeEachWrite?: WriteGuard | undefined;
  /**
   * Called after each chunk that wrote data, with the bytes it wrote (holes left out); after a clone,
   * once with the bytes the copy holds (its allocated blocks, at most its size).
   */
  readonly onWritten: (bytes: number) => void;
  /** Clones the file where the file system shares extents; without it, bytes are always copied. */
  readonly sharing?: ExtentSharing | undefined;
}

/**
 * At most {@link fileDataConcurrency} data copies at once (per clone), each with a chunk buffer of its
 * own, reused from file to file.
 */
export class FileDataSlots {
  readonly #free: Buffer[] = [];
  #unallocated: number;
  readonly #waiting: ((buffer: Buffer) => void)[] = [];

  constructor(limit: number = fileDataConcurrency) {
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError('limit must be a positive integer');
    this.#unallocated = limit;
  }

  /** Runs `task` once a slot is free, with that slot's buffer. */
  async run<T>(task: (buffer: Buffer) => Promise<T>): Promise<T> {
    const buffer = await this.#acquire();
    try {
      return await task(buffer);
    } finally {
      // Handed straight to the next waiter, so no later caller can take it meanwhile.
      const next = this.#waiting.shift();
      if (next === undefined) this.#free.push(buffer);
      else next(buffer);
    }
  }

  #acquire(): Promise<Buffer> {
    const free = this.#free.pop();
    if (free !== undefined) return Promise.resolve(free);
    if (this.#unallocated > 0) {
      this.#unallocated--;
      return Promise.resolve(Buffer.allocUnsafe(chunkBytes));
    }
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
    });
  }
}

/** A regular file to copy: `name` in `source`, as `lstat` saw it, to the new `name` in `target`. */
export interface FileToCopy {
  readonly source: DirectoryHandle;
  readonly target: DirectoryHandle;
  readonly name: EntryName;
  readonly stats: Stats;
}

function changed(path: string): SafeFsError {
  return new SafeFsError({ kind: 'io', path, operation: 'copy', detail: 'changed while being copied' });
}

/**
 * Opens the source for reading only once it is known to be the regular file `lstat` saw: a name
 * swapped for a FIFO or a device between the `lstat` and the open is refused without being opened.
 * `undefined` when it vanished.
 */
async function openSource({
  source,
  name,
  stats,
}: FileToCopy): Promise<{ file: FileHandle; opened: Stats } | undefined> {
  const located = await source.openExistingFile(name, pathOnly);
  if (located === undefined) return undefined;
  try {
    const opened = await located.stat();
    if (!opened.isFile() || !sameIdentity(opened, stats)) throw changed(source.pathOf(name));
    // The descriptor's link reopens that very inode, whatever the name holds by now.
    const file = await open(`/proc/self/fd/${located.fd}`, constants.O_RDONLY).catch((err: unknown) => {
      throw systemError(err, 'open', source.pathOf(name));
    });
    return { file, opened };
  } finally {
    await located.close();
  }
}

/**
 * Copies a regular file: its data (see the module comment), then its owner and mode.
 *
 * @returns false when the source vanished before it was opened.
 * @throws {@link SafeFsError}: `io` when the name no longer is the file `lstat` saw; what a call
 * fails with; what `throwIfStopped` or the guard throws.
 */
export async function copyRegularFile(
  entry: FileToCopy,
  slots: FileDataSlots,
  options: FileCopyOptions,
): Promise<boolean> {
  const { source, target, name } = entry;
  const opened = await openSource(entry);
  if (opened === undefined) return false;
  const { file: from, opened: stats } = opened;
  try {
    options.beforeEachWrite?.();
    // O_EXCL never follows a link at the final name; private until the copy's mode is set last.
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const to = await open(target.procPath(name), flags, 0o600).catch((err: unknown) => {
      throw systemError(err, 'open', target.pathOf(name));
    });
    try {
      const paths = { from: source.pathOf(name), to: target.pathOf(name) };
      await slots.run(async (buffer) => {
        if (!(await cloneData(from, to, stats.dev, paths, options))) {
          await copyData(from, to, stats.size, buffer, paths, options);
        }
      });
      options.beforeEachWrite?.();
      // Owner first: chown clears set-id bits, which the mode then sets again.
      await to.chown(stats.uid, stats.gid).catch((err: unknown) => {
        throw systemError(err, 'fchown', paths.to);
      });
      await to.chmod(stats.mode & 0o7777).catch((err: unknown) => {
        throw systemError(err, 'fchmod', paths.to);
      });
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
  return true;
}

/** Clones `from` into `to` when `options.sharing` can; false when the bytes must be copied. */
async function cloneData(
  from: FileHandle,
  to: FileHandle,
  device: number,
  paths: { readonly from: string; readonly to: string },
  options: FileCopyOptions,
): Promise<boolean> {
  if (options.sharing === undefined) return false;
  options.throwIfStopped();
  options.beforeEachWrite?.();
  if (!(await options.sharing.share(from, to, device, paths.to))) return false;
  const clone = await to.stat().catch((err: unknown) => {
    throw systemError(err, 'fstat', paths.to);
  });
  const bytes = Math.min(clone.blocks * 512, clone.size);
  if (bytes > 0) options.onWritten(bytes);
  return true;
}

/**
 * Copies up to `size` bytes (the size seen at open) chunk by chunk, stopping early at a 0-byte read
 * (the file shrank). Zero blocks are not written and the copy is given its length at the end, so they
 * stay holes.
 */
async function copyData(
  from: FileHandle,
  to: FileHandle,
  size: number,
  buffer: Buffer,
  paths: { readonly from: string; readonly to: string },
  options: FileCopyOptions,
): Promise<void> {
  let position = 0;
  let dataEnd = 0;
  while (position < size) {
    options.throwIfStopped();
    const length = Math.min(buffer.length, size - position);
    const { bytesRead } = await from.read(buffer, 0, length, position).catch((err: unknown) => {
      throw systemError(err, 'read', paths.from);
    });
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    const written = await writeData(to, chunk, position, paths.to, options.beforeEachWrite);
    if (written.bytes > 0) {
      dataEnd = written.end;
      options.onWritten(written.bytes);
    }
    position += bytesRead;
  }
  if (position > dataEnd) {
    options.beforeEachWrite?.();
    await to.truncate(position).catch((err: unknown) => {
      throw systemError(err, 'ftruncate', paths.to);
    });
  }
}

function isZeroBlock(chunk: Buffer, offset: number): boolean {
  const block = chunk.subarray(offset, offset + holeBytes);
  return block.equals(block.length === holeBytes ? zeroBlock : zeroBlock.subarray(0, block.length));
}

/**
 * Writes the runs of non-zero blocks of `chunk`, read at `position`; returns the bytes written and
 * where the last run ends in the file.
 */
async function writeData(
  to: FileHandle,
  chunk: Buffer,
  position: number,
  path: string,
  guard: WriteGuard | undefined,
): Promise<{ bytes: number; end: number }> {
  let bytes = 0;
  let end = 0;
  const write = async (start: number, stop: number): Promise<void> => {
    guard?.();
    await writeAll(to, chunk.subarray(start, stop), position + start, path);
    bytes += stop - start;
    end = position + stop;
  };
  let start: number | undefined;
  for (let offset = 0; offset < chunk.length; offset += holeBytes) {
    if (!isZeroBlock(chunk, offset)) start ??= offset;
    else if (start !== undefined) {
      await write(start, offset);
      start = undefined;
    }
  }
  if (start !== undefined) await write(start, chunk.length);
  return { bytes, end };
}

async function writeAll(to: FileHandle, data: Buffer, position: number, path: string): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await to
      .write(data, done, data.length - done, position + done)
      .catch((err: unknown) => {
        throw systemError(err, 'write', path);
      });
    done += bytesWritten;
  }
}
