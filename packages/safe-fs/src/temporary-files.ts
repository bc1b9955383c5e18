/**
 * Temporary record files left by a crash. A record that replaces another is made under a temporary
 * name and then published by `rename` (by `link` where it is a regular file, see
 * `ownership-record.ts`); a process killed in between leaves the temporary entry behind.
 * Node.js cannot avoid that with `O_TMPFILE`: publishing such a file needs `linkat(AT_EMPTY_PATH)`
 * or `linkat(AT_SYMLINK_FOLLOW)` on `/proc/self/fd/<fd>`, and Node only has `link(2)`, which does not
 * follow that link (native code would be needed). So leftovers are recognised by name and swept.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import { batchesOf } from './directory-listing.ts';
import { errnoCode } from './errors.ts';
import { isTemporaryRecordName, temporaryWriterTag } from './reserved-names.ts';
import { writerState } from './temporary-writer.ts';

/**
 * Default age after which a temporary record file whose writer cannot be checked (another host)
 * counts as abandoned. A record is a few hundred
 * bytes written in one call; even a slow NFS server finishes in well under this. Sweeping a file
 * that a stalled writer still uses only fails that writer's publish, which it retries.
 */
export const defaultTemporaryFileGraceMs = 60_000;

// Temporary names this process is writing right now: never swept, whatever their age.
const inFlight = new Set<string>();

/** Marks `name` as being written by this process until the returned function is called. */
export function holdTemporaryName(name: string): () => void {
  inFlight.add(name);
  return () => {
    inFlight.delete(name);
  };
}

/** What a sweep did, paths relative to the base. */
export interface SweepReport {
  /** Abandoned temporary files removed. */
  readonly removed: readonly string[];
  /** Temporary files kept because they are younger than the grace period or being written. */
  readonly kept: readonly string[];
}

/**
 * Whether temporary file `name`, last modified at `mtimeMs`, is abandoned: not being written by this
 * process, and either its writer is known to be gone (a crashed or killed process on this host) or,
 * when the writer cannot be checked (another host), older than `graceMs`. A file whose writer still
 * runs is kept: it may be open.
 */
function isAbandoned(name: string, mtimeMs: number, now: number, graceMs: number): boolean {
  if (inFlight.has(name)) return false;
  switch (writerState(temporaryWriterTag(name))) {
    case 'self':
    case 'dead':
      return true;
    case 'alive':
      return false;
    case 'unknown':
      return now - mtimeMs >= graceMs;
  }
}

/**
 * Removes abandoned temporary record files (see {@link isAbandoned}) directly inside `dir`, read in
 * batches (a directory the sweep enters may be a tenant's, see `sweep-tree.ts`).
 */
export async function sweepTemporaryFiles(
  dir: DirectoryHandle,
  now: number,
  graceMs: number,
): Promise<SweepReport> {
  const report = { removed: [] as string[], kept: [] as string[] };
  for await (const names of batchesOf(dir)) {
    for (const name of names) {
      if (typeof name === 'string') await sweepTemporaryFile(dir, name, now, graceMs, report);
    }
  }
  return report;
}

/**
 * Removes `name` of `dir` when it is an abandoned temporary record file, and adds its path to
 * `report`'s removed or kept ones when it is a temporary record file at all.
 */
export async function sweepTemporaryFile(
  dir: DirectoryHandle,
  name: string,
  now: number,
  graceMs: number,
  report: { readonly removed: string[]; readonly kept: string[] },
): Promise<void> {
  if (!isTemporaryRecordName(name)) return;
  const stats = await dir.lstat(name);
  // A record's temporary name holds a symbolic link, or a regular file where links are refused.
  if (stats === undefined || !(stats.isSymbolicLink() || stats.isFile())) return;
  if (!isAbandoned(name, stats.mtimeMs, now, graceMs)) {
    report.kept.push(dir.pathOf(name));
    return;
  }
  try {
    await dir.unlink(name);
    report.removed.push(dir.pathOf(name));
  } catch (err) {
    // Another sweeper, or the writer's own cleanup, got there first.
    if (errnoCode(err) !== 'ENOENT') throw err;
  }
}
