/**
 * Recursive removal of a directory's contents that never follows a link and tolerates a workload
 * still changing the tree: entries that vanish are skipped, entries swapped between `lstat` and use
 * are retried on the next pass. Names are used as listed (bytes, when not UTF-8), so no name a
 * workload can create makes its volume undeletable. At most {@link maxOpenLevels} descriptors are
 * held however deep the tree is: a level whose descriptor was closed is reopened through `..` of
 * its child and checked to be the same directory (device and inode) before anything is removed in
 * it, so a subtree moved elsewhere meanwhile is never emptied there.
 */

import { constants } from 'node:fs';
import type { DirectoryHandle, EntryName, Identity } from './directory-handle.ts';
import { errnoCode, isSafeFsError } from './errors.ts';
import { reopenParent } from './reopen-parent.ts';

// A pass removes everything it saw; another pass only matters if something appeared meanwhile.
const maxPasses = 3;

/** Descriptors held at once by one removal, whatever the depth of the tree. */
export const maxOpenLevels = 32;

// Codes that mean "the entry changed under us"; the next pass sees its new state.
const raceCodes: ReadonlySet<string> = new Set([
  'ENOENT',
  'ENOTEMPTY',
  'EEXIST',
  'EISDIR',
  'ENOTDIR',
  'ELOOP',
]);

interface Level {
  /** Open while it is one of the deepest levels; `undefined` once closed to bound descriptors. */
  handle: DirectoryHandle | undefined;
  readonly identity: Identity;
  /** Name in the parent level; unused for the top. */
  readonly name: EntryName;
  pending: EntryName[];
  pass: number;
}

function tolerate(err: unknown, level: Level): void {
  const code = errnoCode(err);
  if (level.pass >= maxPasses || code === undefined || !raceCodes.has(code)) throw err;
}

function openHandle(level: Level): DirectoryHandle {
  if (level.handle === undefined) throw new Error('level is not open');
  return level.handle;
}

/**
 * Removes everything inside `top`, leaving `top` itself in place (and open). `listed`, a listing of
 * `top` the caller has just made, stands for its first one (over NFS each listing costs a round
 * trip); `top` is listed again after every pass, so entries added since are still seen.
 */
export async function emptyDirectory(top: DirectoryHandle, listed?: readonly EntryName[]): Promise<void> {
  if (listed?.length === 0) return;
  const levels: Level[] = [{ handle: top, identity: await top.stat(), name: '', pending: [], pass: 0 }];
  let opened = 0;
  let topListing = listed;
  try {
    while (levels.length > 0) {
      const level = levels[levels.length - 1] as Level;
      const dir = openHandle(level);
      if (level.pending.length === 0) {
        const names = levels.length === 1 && topListing !== undefined ? [...topListing] : await dir.readdir();
        topListing = undefined;
        if (names.length === 0 || level.pass >= maxPasses) {
          if (levels.length === 1) return;
          if (await finishLevel(levels)) opened++;
          opened--;
          continue;
        }
        level.pass++;
        level.pending = names;
      }
      const name = level.pending.shift() as EntryName;
      try {
        const child = await openChild(dir, name);
        if (child === undefined) continue;
        levels.push({ handle: child, identity: await child.stat(), name, pending: [], pass: 0 });
        opened++;
        // Keep the deepest levels open; the shallower ones are reopened on the way back up.
        const victim =
          opened > maxOpenLevels ? levels.find((l, i) => i > 0 && l.handle !== undefined) : undefined;
        if (victim !== undefined) {
          await victim.handle?.close();
          victim.handle = undefined;
          opened--;
        }
      } catch (err) {
        tolerate(err, level);
      }
    }
  } finally {
    for (const level of levels.slice(1)) await level.handle?.close();
  }
}

/**
 * Resolves when this process may remove the entries of every directory in `top`'s tree (`top`
 * included), so that {@link emptyDirectory} cannot stop halfway for want of permission and leave a
 * half-deleted volume; rejects with the refusal for the first directory that it may not. Asks the
 * file system (`access(2)`: over NFS the server, so `root_squash` is seen); finds nothing to refuse
 * when the system calls have no `access`. Directories deeper than {@link maxOpenLevels} below `top`
 * are not looked at (one descriptor per level is held), nor a sticky directory's rule that only an
 * entry's owner may remove it. `listed` is a listing of `top` just made, as for {@link emptyDirectory}.
 */
export function assertEmptiable(top: DirectoryHandle, listed?: readonly EntryName[]): Promise<void> {
  return checkLevel(top, 0, listed);
}

async function checkLevel(dir: DirectoryHandle, depth: number, listed?: readonly EntryName[]): Promise<void> {
  await dir.checkAccess(constants.W_OK | constants.X_OK);
  if (depth >= maxOpenLevels) return;
  for (const name of listed ?? (await dir.readdir())) {
    const stats = await dir.lstat(name);
    if (stats?.isDirectory() !== true) continue;
    // Swapped for a link or a file meanwhile: `openDirectory` refuses it (nothing is followed), and
    // removing such an entry needs only this directory's permission, checked above.
    const child = await dir.openDirectory(name).catch((err: unknown) => {
      if (isSafeFsError(err) && (err.kind === 'symlink' || err.kind === 'not-a-directory')) return undefined;
      throw err;
    });
    if (child === undefined) continue;
    try {
      await checkLevel(child, depth + 1);
    } finally {
      await child.close();
    }
  }
}

/** Unlinks a non-directory `name`, or opens directory `name` to be emptied (`undefined`: gone). */
async function openChild(dir: DirectoryHandle, name: EntryName): Promise<DirectoryHandle | undefined> {
  const stats = await dir.lstat(name);
  if (stats === undefined) return undefined;
  if (!stats.isDirectory()) {
    await dir.unlink(name);
    return undefined;
  }
  // `openDirectory` refuses a symlink swapped in after the lstat; the next pass unlinks it.
  return dir.openDirectory(name);
}

/**
 * The deepest level is empty: close it and remove it from its parent, reopening the parent when its
 * descriptor was closed (returns whether it was).
 */
async function finishLevel(levels: Level[]): Promise<boolean> {
  const level = levels.pop() as Level;
  const parent = levels[levels.length - 1] as Level;
  const child = openHandle(level);
  const reopened = parent.handle === undefined;
  try {
    parent.handle ??= await reopenParent(parent.identity, child, {
      operation: 'remove',
      detail: 'was moved out of the volume while being removed; will look again',
    });
  } finally {
    await child.close();
    level.handle = undefined;
  }
  try {
    await parent.handle.rmdir(level.name);
  } catch (err) {
    tolerate(err, parent);
  }
  return reopened;
}
