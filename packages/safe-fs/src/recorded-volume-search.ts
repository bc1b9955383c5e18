/**
 * Finds the volume directories whose ownership record concerns one PV: recorded for it (its live,
 * retained or archived volume) or taking its data back (see `take-back.ts`). Only records are
 * believed: a directory merely named after the PV proves nothing about whose data it holds.
 */

import { type DirectoryHandle, openBase } from './directory-handle.ts';
import { type OwnershipRecord, readOwnershipRecord } from './ownership-record.ts';
import { walkParentLevels } from './parent-levels-walk.ts';
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
    await walkParentLevels(
      base,
      async ({ dir, depth, recordInBatch, hasRecord }, name) => {
        const leaf = recordLeaf(name);
        if (leaf !== undefined) {
          // Records, not directories, are listed: a record whose directory was just moved away counts.
          const record = await readOwnershipRecord(dir, leaf === 'hashed' ? '' : leaf, name);
          const volume = leaf === 'hashed' ? record?.volume : leaf;
          if (record !== undefined && volume !== undefined && recordName(volume) === name && wanted(record)) {
            found.push({ path: dir.pathOf(volume) as RelativeVolumePath, record });
          }
          return undefined;
        }
        if (isReservedName(name) || looksLikeVolume(name) || recordInBatch(name)) return undefined;
        if ((await dir.lstat(name))?.isDirectory() !== true || (await hasRecord(name))) return undefined;
        return enterParent(dir, name, depth, maxDepth);
      },
      searchMoved,
    );
  } finally {
    await base.close();
  }
  return found;
}

const searchMoved = { operation: 'search', detail: 'was moved while being searched; will look again' };

/**
 * Opens directory `name` of `dir` (no volume; at `depth`) to be searched: when this package made it
 * as a parent, or while `depth` is below `maxDepth`; closed and `undefined` otherwise.
 */
export async function enterParent(
  dir: DirectoryHandle,
  name: string,
  depth: number,
  maxDepth: number,
): Promise<DirectoryHandle | undefined> {
  const child = await dir.openDirectory(name);
  if (child === undefined || depth < maxDepth) return child;
  try {
    if ((await child.lstat(parentMarkerName)) !== undefined) return child;
  } catch (err) {
    await child.close();
    throw err;
  }
  await child.close();
  return undefined;
}
