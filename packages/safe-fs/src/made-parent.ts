/**
 * Whether a directory without a record is a parent this package made, and so no volume: what a
 * delete finds when it removed the volume and was interrupted before the PV went, and a nested claim
 * has made the same name its parent since. The marker and the in-progress mode are not enough: a
 * tenant can plant both in its own unrecorded (upstream-era) volume to keep its data past the class's
 * delete policy. A parent this package made holds nothing of a workload's: only reserved names,
 * volumes (each with its record beside it) and parents holding the same, so that is checked too.
 */

import type { Stats } from 'node:fs';
import { type DirectoryHandle, type EntryName, nameText } from './directory-handle.ts';
import { isParentInProgress } from './parent-marker.ts';
import { isReservedName, parentMarkerName, recordName } from './reserved-names.ts';

// Deeper chains of parents than this are taken for a tenant's tree (each level holds a descriptor).
const maxParentDepth = 64;

function isMarkedParent(stats: Stats, listed: readonly EntryName[]): boolean {
  return isParentInProgress(stats) || listed.some((name) => nameText(name) === parentMarkerName);
}

/** Whether `dir` holds only reserved names, volumes with their records, and made parents. */
async function holdsOnlyVolumes(
  dir: DirectoryHandle,
  listed: readonly EntryName[],
  depth: number,
): Promise<boolean> {
  const texts = new Set(listed.map(nameText));
  for (const name of listed) {
    const text = nameText(name);
    if (isReservedName(text)) continue;
    const stats = await dir.lstat(name);
    if (stats === undefined) continue;
    if (!stats.isDirectory()) return false;
    if (texts.has(recordName(text))) continue;
    if (depth >= maxParentDepth) return false;
    const child = await dir.openDirectory(name);
    if (child === undefined) continue;
    try {
      const inner = await child.readdir();
      if (!isMarkedParent(stats, inner) || !(await holdsOnlyVolumes(child, inner, depth + 1))) return false;
    } finally {
      await child.close();
    }
  }
  return true;
}

/**
 * Whether `dir` (without a record; `stats` and `listed` its own, just read) is a parent this package
 * made: marked as one, and holding nothing but volumes and parents of this package.
 */
export async function isMadeParent(
  dir: DirectoryHandle,
  stats: Stats,
  listed: readonly EntryName[],
): Promise<boolean> {
  return isMarkedParent(stats, listed) && (await holdsOnlyVolumes(dir, listed, 0));
}
