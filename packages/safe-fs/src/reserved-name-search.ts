/**
 * Finds reserved names (records, parent markers) inside a directory tree. An unrecorded directory
 * (one an upstream provisioner made) may since have received volumes of this package below it;
 * deleting or archiving it would take those volumes along, so such a tree is refused instead. The
 * tree is workload data: it is walked as a removal walks it (`open-levels.ts`), in batches and with
 * bounded state however wide or deep.
 */

import { type DirectoryHandle, type EntryName, nameText } from './directory-handle.ts';
import { OpenLevels } from './open-levels.ts';
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

function isReserved(name: EntryName): boolean {
  return isReservedName(nameText(name));
}

/**
 * The base-relative path of the first reserved name (a record or parent marker) anywhere below `dir`
 * (links are never followed), or `undefined` when there is none. Each batch of a directory's names is
 * searched before anything below them.
 */
export async function findReservedName(
  dir: DirectoryHandle,
  search: ReservedNameSearch = {},
): Promise<string | undefined> {
  let found: string | undefined;
  const levels = new OpenLevels(dir, await dir.stat(), undefined, {
    relisting: 'resume',
    moved: { operation: 'search', detail: 'was moved while being searched; will look again' },
    onBatch: (level, names) => {
      const reserved = names.find(isReserved);
      if (reserved !== undefined) found ??= level.pathOf(reserved);
    },
  });
  try {
    for (;;) {
      const name = await levels.nextName();
      if (found !== undefined) return found;
      if (name === undefined) {
        if (levels.depth === 0) return undefined;
        await levels.leave();
        continue;
      }
      const here = levels.dir;
      const stats = await here.lstat(name);
      if (stats?.isDirectory() !== true) continue;
      if (search.volumeLike === true && looksLikeVolume(nameText(name))) return here.pathOf(name);
      // A directory swapped for a link meanwhile is refused by `openDirectory`: the caller retries.
      const child = await here.openDirectory(name);
      if (child !== undefined) await levels.enter(child, name, undefined);
    }
  } finally {
    await levels.close();
  }
}
