/**
 * The checks every removal of a volume directory makes before and after it removes anything: that it
 * hosts no volume of this package, and that a name still means the directory that was opened.
 */

import type { Stats } from 'node:fs';
import { ownershipError } from './adoption.ts';
import { type DirectoryHandle, type EntryName, nameText, sameIdentity } from './directory-handle.ts';
import { findEntry, listIfFewer } from './directory-listing.ts';
import { SafeFsError } from './errors.ts';
import { findReservedName } from './reserved-name-search.ts';
import { isReservedName } from './reserved-names.ts';

/**
 * Refuses a volume directory that holds volumes or parents of this package: removing or moving it
 * would take their data along. An unrecorded directory (an upstream provisioner's) may have received
 * them anywhere below it, so its whole tree is searched. Below a recorded volume every create is
 * refused, so the only way in was two creates racing for its name, which leaves their marks in its
 * top level (the parent marker and the inner volume's record): that is where it is searched, in
 * `listed` when the top level was small enough to be listed at once (see {@link topLevelOf}).
 */
export async function refuseHostingVolumes(
  volume: DirectoryHandle,
  recorded: boolean,
  listed: readonly EntryName[] | undefined,
): Promise<void> {
  const found = recorded ? await topLevelReservedName(volume, listed) : await findReservedName(volume);
  if (found !== undefined) {
    throw ownershipError(
      volume.path,
      `holds another volume's record or parent marker (found ${JSON.stringify(found)}), so removing it would take that volume's data along; refusing to touch it`,
    );
  }
}

async function topLevelReservedName(
  volume: DirectoryHandle,
  listed: readonly EntryName[] | undefined,
): Promise<string | undefined> {
  const isReserved = (name: EntryName) => isReservedName(nameText(name));
  const reserved = listed === undefined ? await findEntry(volume, isReserved) : listed.find(isReserved);
  return reserved === undefined ? undefined : volume.pathOf(reserved);
}

/**
 * The top level of `volume` listed once when it is small: then that one listing serves every look at
 * it (over NFS each costs a round trip). A wide one (`undefined`) is read in batches by each look
 * instead, so that its width never decides the memory a removal takes.
 */
export function topLevelOf(volume: DirectoryHandle): Promise<EntryName[] | undefined> {
  return listIfFewer(volume);
}

export function vanished(dir: DirectoryHandle, leaf: string): SafeFsError {
  return new SafeFsError({
    kind: 'io',
    path: dir.pathOf(leaf),
    operation: 'remove',
    detail: 'was moved or replaced while being removed; will look again',
  });
}

/** Throws {@link vanished} unless `name` in `dir` is still the directory whose `fstat` was `stats`. */
export async function assertStill(dir: DirectoryHandle, name: string, stats: Stats): Promise<void> {
  const listed = await dir.lstat(name);
  if (listed === undefined || !sameIdentity(listed, stats)) throw vanished(dir, name);
}
