/**
 * Finds the volume directories whose ownership record concerns one PV: recorded for it (its live,
 * retained or archived volume) or taking its data back (see `take-back.ts`). Only records are
 * believed: a directory merely named after the PV proves nothing about whose data it holds.
 */

import { type DirectoryHandle, nameText, openBase } from './directory-handle.ts';
import { type OwnershipRecord, readOwnershipRecord } from './ownership-record.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { isReservedName, parentMarkerName, recordLeaf, recordName } from './reserved-names.ts';
import type { VolumeContext } from './volume-context.ts';
import { looksLikeVolume } from './volume-like.ts';

/** A volume record and the directory it is for, which may be gone (moved away, or being made). */
export interface RecordedVolume {
  readonly path: RelativeVolumePath;
  readonly record: OwnershipRecord;
}

/**
 * Whether `record` is a claim's take-back of `takenFrom`'s data: a reservation of the old directory,
 * or the live volume the data went to. Once that volume is released or archived its data is its own
 * PV's again (so it can be taken back once more, under that PV's name).
 */
export function isTakingBack(record: OwnershipRecord): boolean {
  return record.takenFrom !== undefined && record.releasedAt === undefined && record.archivedAt === undefined;
}

/** Whether `record` holds the data of PV `pvName` as that PV left it (live, retained or archived). */
export function holdsDataOf(record: OwnershipRecord, pvName: string): boolean {
  return record.pvName === pvName && !isTakingBack(record);
}

/**
 * The recorded volumes below the base whose record names `pvName` as its PV or as `takenFrom`.
 * Volumes are never entered (what is inside one is tenant data); other directories are entered when
 * this package made them as parents, or while their depth is below `maxDepth`.
 */
export function findVolumesOfPv(
  context: VolumeContext,
  pvName: string,
  maxDepth: number,
): Promise<RecordedVolume[]> {
  return findRecordedVolumes(
    context,
    (record) => record.pvName === pvName || record.takenFrom === pvName,
    maxDepth,
  );
}

/** The recorded volumes below the base whose record passes `wanted`, searched as {@link findVolumesOfPv} does. */
export async function findRecordedVolumes(
  context: VolumeContext,
  wanted: (record: OwnershipRecord) => boolean,
  maxDepth: number,
): Promise<RecordedVolume[]> {
  const found: RecordedVolume[] = [];
  const base = await openBase(context.fs, context.base);
  try {
    await search(base, 0, maxDepth, wanted, found);
  } finally {
    await base.close();
  }
  return found;
}

async function search(
  dir: DirectoryHandle,
  depth: number,
  maxDepth: number,
  wanted: (record: OwnershipRecord) => boolean,
  found: RecordedVolume[],
): Promise<void> {
  const names = (await dir.readdir()).map(nameText);
  const entries = new Set(names);
  for (const name of names) {
    const leaf = recordLeaf(name);
    if (leaf !== undefined) {
      // Records, not directories, are listed: a record whose directory was just moved away counts.
      const record = await readOwnershipRecord(dir, leaf === 'hashed' ? '' : leaf, name);
      const volume = leaf === 'hashed' ? record?.volume : leaf;
      if (record !== undefined && volume !== undefined && recordName(volume) === name && wanted(record)) {
        found.push({ path: dir.pathOf(volume) as RelativeVolumePath, record });
      }
      continue;
    }
    if (isReservedName(name) || entries.has(recordName(name)) || looksLikeVolume(name)) continue;
    if ((await dir.lstat(name))?.isDirectory() !== true) continue;
    const child = await dir.openDirectory(name);
    if (child === undefined) continue;
    try {
      const ours = (await child.lstat(parentMarkerName)) !== undefined;
      if (ours || depth < maxDepth) await search(child, depth + 1, maxDepth, wanted, found);
    } finally {
      await child.close();
    }
  }
}
