/**
 * Finds reserved names (records, parent markers) inside a directory tree. An unrecorded directory
 * (one an upstream provisioner made) may since have received volumes of this package below it;
 * deleting or archiving it would take those volumes along, so such a tree is refused instead.
 */

import { type DirectoryHandle, nameText } from './directory-handle.ts';
import { isReservedName } from './reserved-names.ts';
import { looksLikeVolume } from './volume-like.ts';

/** What {@link findReservedName} looks for besides reserved names. */
export interface ReservedNameSearch {
  /**
   * Also directories named like volumes (an upstream provisioner's nested volumes have no records,
   * only their names).
   */
  readonly volumeLike?: boolean;
}

/**
 * The base-relative path of the first reserved name (a record or parent marker) anywhere below `dir`
 * (links are never followed), or `undefined` when there is none.
 */
export async function findReservedName(
  dir: DirectoryHandle,
  search: ReservedNameSearch = {},
): Promise<string | undefined> {
  const names = await dir.readdir();
  const reserved = names.find((name) => isReservedName(nameText(name)));
  if (reserved !== undefined) return dir.pathOf(reserved);
  for (const name of names) {
    const stats = await dir.lstat(name);
    if (stats?.isDirectory() !== true) continue;
    if (search.volumeLike === true && looksLikeVolume(nameText(name))) return dir.pathOf(name);
    // A directory swapped for a link meanwhile is refused by `openDirectory`: the caller retries.
    const child = await dir.openDirectory(name);
    if (child === undefined) continue;
    try {
      const inner = await findReservedName(child, search);
      if (inner !== undefined) return inner;
    } finally {
      await child.close();
    }
  }
  return undefined;
}
