/**
 * A delete's removal name: a recorded volume, once emptied, is renamed to a reserved name beside it
 * (see `removalName`) before its record goes, and that name is removed last, so every state a crash
 * leaves says the removal was this package's (see `remove-volume.ts`).
 */

import type { Stats } from 'node:fs';
import { type DirectoryHandle, sameIdentity } from './directory-handle.ts';
import { errnoCode } from './errors.ts';
import { assertStill, refuseHostingVolumes, topLevelOf, vanished } from './removal-checks.ts';
import { assertEmptiable, emptyDirectory } from './remove-tree.ts';

/**
 * Renames recorded volume `leaf`, emptied, to its removal name `removed`: the stamp that its removal
 * is this package's (see `forgetMissing` in `remove-volume.ts`). A leftover of this PV's earlier,
 * interrupted delete under that name goes first.
 */
export async function moveToRemovalName(dir: DirectoryHandle, leaf: string, removed: string): Promise<void> {
  try {
    await dir.rename(leaf, removed);
  } catch (err) {
    const code = errnoCode(err);
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    await removeLeftover(dir, removed);
    await dir.rename(leaf, removed);
  }
}

/**
 * Checks that what the rename moved to `removed` is the volume that was opened (`stats`) and emptied
 * through its descriptor, before that name is removed. Made after the record went, which changed
 * the parent, so over NFS this look asks the server, not the client's cache. Something else (swapped
 * in at `leaf` after the open) is put back untouched; the volume it replaced was emptied before it was
 * moved, as its delete asked.
 */
export async function assertMoved(
  dir: DirectoryHandle,
  leaf: string,
  removed: string,
  stats: Stats,
): Promise<void> {
  const moved = await dir.lstat(removed);
  if (moved !== undefined && sameIdentity(moved, stats)) return;
  if (moved !== undefined) await dir.rename(removed, leaf).catch(() => undefined);
  throw vanished(dir, leaf);
}

/**
 * Removes directory `name`, a removal name left by an interrupted delete, as a delete removes a
 * recorded volume (never following a link, nothing unless everything can go); `false` when absent.
 */
export async function removeLeftover(dir: DirectoryHandle, name: string): Promise<boolean> {
  const leftover = await dir.openDirectory(name);
  if (leftover === undefined) return false;
  try {
    const stats = await leftover.stat();
    const names = await topLevelOf(leftover);
    await refuseHostingVolumes(leftover, true, names);
    await assertEmptiable(leftover, names);
    await emptyDirectory(leftover, names);
    await assertStill(dir, name, stats);
  } finally {
    await leftover.close();
  }
  await dir.rmdir(name);
  return true;
}
