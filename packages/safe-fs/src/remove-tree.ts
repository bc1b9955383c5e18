/**
 * Recursive removal of a directory's contents that never follows a link and tolerates a workload
 * still changing the tree: entries that vanish are skipped, entries swapped between `lstat` and use
 * are retried on the next pass. Names are used as listed (bytes, when not UTF-8), so no name a
 * workload can create makes its volume undeletable.
 *
 * Directories are read in batches, never whole, through an explicit stack of the levels being
 * removed (`open-levels.ts`): memory does not grow with the width of a directory, at most
 * `maxOpenLevels` levels hold descriptors however deep the tree, and no step rescans the stack.
 * A level closed for depth is reopened through `..` of its child and checked to be the same
 * directory (device and inode) before anything is removed in it, so a subtree moved elsewhere
 * meanwhile is never emptied there; its listing then starts again, which finds only what is left.
 * Removing entries while a listing is read may make it miss some or show some twice: a level is
 * listed again until a whole pass finds it empty (at most {@link maxPasses}).
 */

import { constants } from 'node:fs';
import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { errnoCode, isSafeFsError } from './errors.ts';
import { OpenLevels } from './open-levels.ts';

// A pass removes everything it saw; another pass only matters if something appeared meanwhile.
const maxPasses = 3;

// Codes that mean "the entry changed under us"; the next pass sees its new state.
const raceCodes: ReadonlySet<string> = new Set([
  'ENOENT',
  'ENOTEMPTY',
  'EEXIST',
  'EISDIR',
  'ENOTDIR',
  'ELOOP',
]);

/** A level's pass: its number, and how many entries it has found so far. */
interface Pass {
  number: number;
  found: number;
}

function tolerate(err: unknown, pass: Pass): void {
  const code = errnoCode(err);
  if (pass.number >= maxPasses || code === undefined || !raceCodes.has(code)) throw err;
}

/**
 * Removes everything inside `top`, leaving `top` itself in place (and open). `listed`, a complete
 * listing of `top` the caller has just made, stands for its first one (over NFS each listing costs a
 * round trip); `top` is listed again after every pass, so entries added since are still seen.
 */
export async function emptyDirectory(top: DirectoryHandle, listed?: readonly EntryName[]): Promise<void> {
  if (listed?.length === 0) return;
  const levels = new OpenLevels<Pass>(
    top,
    await top.stat(),
    { number: 1, found: 0 },
    {
      relisting: 'restart',
      moved: {
        operation: 'remove',
        detail: 'was moved out of the volume while being removed; will look again',
      },
      topListing: listed,
    },
  );
  try {
    for (;;) {
      const pass = levels.state;
      const name = await levels.nextName();
      if (name === undefined) {
        if (pass.found > 0 && pass.number < maxPasses) {
          pass.number++;
          pass.found = 0;
          levels.relist();
          continue;
        }
        if (levels.depth === 0) return;
        // Empty, or its passes are spent: then `rmdir` says ENOTEMPTY, tolerated by the level above.
        const emptied = await levels.leave();
        try {
          await levels.dir.rmdir(emptied);
        } catch (err) {
          tolerate(err, levels.state);
        }
        continue;
      }
      pass.found++;
      try {
        const child = await openChild(levels.dir, name);
        if (child !== undefined) await levels.enter(child, name, { number: 1, found: 0 });
      } catch (err) {
        tolerate(err, pass);
      }
    }
  } finally {
    await levels.close();
  }
}

/**
 * Resolves when this process may remove the entries of every directory in `top`'s tree (`top`
 * included), so that {@link emptyDirectory} cannot stop halfway for want of permission and leave a
 * half-deleted volume; rejects with the refusal for the first directory that it may not. Asks the
 * file system (`access(2)`: over NFS the server, so `root_squash` is seen); finds nothing to refuse
 * when the system calls have no `access`. The walk is bounded as {@link emptyDirectory}'s is, and
 * reaches every depth; a sticky directory's rule that only an entry's owner may remove it is not
 * looked at. `listed` is a complete listing of `top` just made, as for {@link emptyDirectory}.
 */
export async function assertEmptiable(top: DirectoryHandle, listed?: readonly EntryName[]): Promise<void> {
  await top.checkAccess(constants.W_OK | constants.X_OK);
  // Nothing to walk: the walk's `fstat` of `top` would only cost a GETATTR over NFS.
  if (listed?.length === 0) return;
  const levels = new OpenLevels(top, await top.stat(), undefined, {
    relisting: 'resume',
    moved: { operation: 'remove', detail: 'was moved while being checked for removal; will look again' },
    topListing: listed,
  });
  try {
    for (;;) {
      const name = await levels.nextName();
      if (name === undefined) {
        if (levels.depth === 0) return;
        await levels.leave();
        continue;
      }
      const dir = levels.dir;
      const stats = await dir.lstat(name);
      if (stats?.isDirectory() !== true) continue;
      // Swapped for a link or a file meanwhile: `openDirectory` refuses it (nothing is followed), and
      // removing such an entry needs only this directory's permission, checked already.
      const child = await dir.openDirectory(name).catch((err: unknown) => {
        if (isSafeFsError(err) && (err.kind === 'symlink' || err.kind === 'not-a-directory'))
          return undefined;
        throw err;
      });
      if (child === undefined) continue;
      await levels.enter(child, name, undefined);
      await child.checkAccess(constants.W_OK | constants.X_OK);
    }
  } finally {
    await levels.close();
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
