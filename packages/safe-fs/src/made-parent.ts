/**
 * Whether a directory without a record is a parent this package made, and so no volume: what a
 * delete finds when it removed the volume and was interrupted before the PV went, and a nested claim
 * has made the same name its parent since. The marker and the in-progress mode are not enough: a
 * tenant can plant both in its own unrecorded (upstream-era) volume to keep its data past the class's
 * delete policy. A parent this package made holds nothing of a workload's: only reserved names,
 * volumes (each with its record beside it) and parents holding the same, so that is checked too.
 *
 * The directories are read in batches and the check stops at the first entry of a workload's: a
 * tenant that plants a marker beside a million files costs one batch per level, not a million names.
 */

import type { Stats } from 'node:fs';
import { type DirectoryHandle, type EntryName, nameText } from './directory-handle.ts';
import { batchesOf } from './directory-listing.ts';
import { listingBatch } from './directory-stream.ts';
import { isParentInProgress } from './parent-marker.ts';
import { isReservedName, parentMarkerName, recordName } from './reserved-names.ts';

// Deeper chains of parents than this are taken for a tenant's tree (each level holds a descriptor
// and its listing, with one batch of names).
const maxParentDepth = 64;

/** Whether `dir` (`stats` its own) carries a parent's mark: the in-progress mode or a marker file. */
async function isMarkedParent(dir: DirectoryHandle, stats: Stats): Promise<boolean> {
  return isParentInProgress(stats) || (await dir.lstat(parentMarkerName)) !== undefined;
}

/**
 * Whether the names of `dir`, handed out in `batches`, are only reserved names, volumes with their
 * records, and made parents. A record is looked for in the batch of its volume and, unless that
 * batch is the whole listing (`whole`, or a short first batch), by name.
 */
async function holdsOnlyVolumes(
  dir: DirectoryHandle,
  batches: AsyncIterable<readonly EntryName[]> | Iterable<readonly EntryName[]>,
  whole: boolean,
  depth: number,
): Promise<boolean> {
  let first = true;
  for await (const names of batches) {
    const inBatch = new Set(names.map(nameText));
    const complete = whole || (first && names.length < listingBatch);
    first = false;
    for (const name of names) {
      const text = nameText(name);
      if (isReservedName(text)) continue;
      const stats = await dir.lstat(name);
      if (stats === undefined) continue;
      if (!stats.isDirectory()) return false;
      const record = recordName(text);
      if (inBatch.has(record) || (!complete && (await dir.lstat(record)) !== undefined)) continue;
      if (depth >= maxParentDepth) return false;
      const child = await dir.openDirectory(name);
      if (child === undefined) continue;
      try {
        if (!(await isMarkedParent(child, stats))) return false;
        if (!(await holdsOnlyVolumes(child, batchesOf(child), false, depth + 1))) return false;
      } finally {
        await child.close();
      }
    }
  }
  return true;
}

/**
 * Whether `dir` (without a record; `stats` its own, just read) is a parent this package made: marked
 * as one, and holding nothing but volumes and parents of this package. `listed`, a complete listing
 * of `dir` just made, saves listing it again; without it `dir` is read in batches.
 */
export async function isMadeParent(
  dir: DirectoryHandle,
  stats: Stats,
  listed?: readonly EntryName[] | undefined,
): Promise<boolean> {
  if (listed !== undefined) {
    const marked = isParentInProgress(stats) || listed.some((name) => nameText(name) === parentMarkerName);
    return marked && (await holdsOnlyVolumes(dir, [listed], true, 0));
  }
  return (await isMarkedParent(dir, stats)) && (await holdsOnlyVolumes(dir, batchesOf(dir), false, 0));
}
