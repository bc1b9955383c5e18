/**
 * A caller's check before every change an operation makes to the file system. A provisioner passes
 * its leader check: a process paused in the middle of an operation and resumed after a successor
 * took over then stops at its next write, instead of undoing the successor's work (say, renaming a
 * record back into place after the successor removed the volume). Reads are never guarded.
 */

import { constants } from 'node:fs';
import type { FsOps, FsPath } from './fs-ops.ts';
import { isTemporaryRecordName } from './reserved-names.ts';
import type { VolumeContext } from './volume-context.ts';
import { markWriteRefusal } from './write-refusal.ts';

/**
 * Called before each change to the file system; throwing stops the operation there, with what was
 * done so far left in place (not even undone: undoing is a change too, and the successor may already
 * build on it). Only the operation's own temporary record file is still removed. The thrown error
 * reaches the caller unchanged.
 */
export type WriteGuard = () => void;

const writeFlags = constants.O_WRONLY | constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC;
function check(guard: WriteGuard): void {
  try {
    guard();
  } catch (err) {
    markWriteRefusal(err);
    throw err;
  }
}

function lastSegment(path: FsPath): string {
  const text = path.toString();
  return text.slice(text.lastIndexOf('/') + 1);
}

/** `call` preceded by `guard`. */
function guardedCall<A extends unknown[], R>(guard: WriteGuard, call: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    check(guard);
    return call(...args);
  };
}

/** `fs` with `guard` called before every call that changes the file system. */
function guardedFs(fs: FsOps, guard: WriteGuard): FsOps {
  return {
    ...fs,
    open: async (path, flags, mode) => {
      if ((flags & writeFlags) !== 0) check(guard);
      return fs.open(path, flags, mode);
    },
    fchmod: guardedCall(guard, fs.fchmod),
    fchown: guardedCall(guard, fs.fchown),
    mkdir: guardedCall(guard, fs.mkdir),
    rmdir: guardedCall(guard, fs.rmdir),
    // The operation's own temporary file is private to it: removing it never touches shared state.
    unlink: async (path) => {
      if (!isTemporaryRecordName(lastSegment(path))) check(guard);
      return fs.unlink(path);
    },
    rename: guardedCall(guard, fs.rename),
    link: guardedCall(guard, fs.link),
    symlink: guardedCall(guard, fs.symlink),
  };
}

/** `context` for one operation guarded by `guard`; unchanged without one. */
export function guardedContext(context: VolumeContext, guard: WriteGuard | undefined): VolumeContext {
  return guard === undefined ? context : { ...context, fs: guardedFs(context.fs, guard) };
}
