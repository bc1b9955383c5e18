/**
 * Finds this package's bookkeeping files inside a directory tree. An unrecorded directory (one an
 * upstream provisioner made) may since have received volumes of this package below it; deleting
 * or archiving it would take those volumes along, so such a tree is refused instead.
 */

import { type DirectoryHandle, nameText } from './directory-handle.ts';
import { isReservedName } from './marker-names.ts';

/**
 * The base-relative path of the first ownership record or parent marker found anywhere below `dir`
 * (links are never followed), or `undefined` when there is none.
 */
export async function findBookkeeping(dir: DirectoryHandle): Promise<string | undefined> {
  const names = await dir.readdir();
  const reserved = names.find((name) => isReservedName(nameText(name)));
  if (reserved !== undefined) return dir.pathOf(reserved);
  for (const name of names) {
    const stats = await dir.lstat(name);
    if (stats?.isDirectory() !== true) continue;
    // A directory swapped for a link meanwhile is refused by `openDirectory`: the caller retries.
    const child = await dir.openDirectory(name);
    if (child === undefined) continue;
    try {
      const found = await findBookkeeping(child);
      if (found !== undefined) return found;
    } finally {
      await child.close();
    }
  }
  return undefined;
}
