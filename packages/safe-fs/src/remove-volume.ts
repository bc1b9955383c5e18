/**
 * Removing a volume for its PV: delete (recursively, never following a link), archive (rename to an
 * unused name, record along) and release (keep the data, mark the record).
 */

import { ownershipError } from './adoption.ts';
import { archiveCandidate, maxArchiveAttempts } from './archive-name.ts';
import { type DirectoryHandle, isMissing, nonDirectoryError } from './directory-handle.ts';
import { hasNoEntries } from './directory-listing.ts';
import { errnoCode, isSafeFsError, SafeFsError } from './errors.ts';
import { isMadeParent } from './made-parent.ts';
import { type OwnershipRecord, readOwnershipRecord, writeOwnershipRecord } from './ownership-record.ts';
import { type ParentChain, removeEmptyParents, withParents } from './parent-chain.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { assertStill, refuseHostingVolumes, topLevelOf, vanished } from './removal-checks.ts';
import { assertMoved, moveToRemovalName, removeLeftover } from './removal-name.ts';
import { assertEmptiable, emptyDirectory } from './remove-tree.ts';
import { recordName, removalName } from './reserved-names.ts';
import { timestampOf, type VolumeContext } from './volume-context.ts';
import { guardedContext, type WriteGuard } from './write-guard.ts';

/** Identifies the PV on whose behalf a volume is deleted or archived. */
export interface RemoveVolumeOptions {
  /** A volume whose record names another PV is refused. */
  readonly pvName: string;
  /**
   * Release only: the caller has checked with the API that neither the record's claim nor its PV
   * exists, so a record whose directory is gone is dropped rather than kept for a directory that
   * may have been moved away.
   */
  readonly recordIsStale?: boolean | undefined;
  /**
   * Checked before every change to the file system (see {@link WriteGuard}); a provisioner passes
   * `context.assertLeader`, so that a removal resumed after its term ended stops before it writes.
   */
  readonly beforeEachWrite?: WriteGuard | undefined;
}

/** What {@link VolumeRoot.deleteVolume} is told besides {@link RemoveVolumeOptions}. */
export interface DeleteVolumeOptions extends RemoveVolumeOptions {
  /**
   * Delete only a directory whose record names `pvName`; one without a record is left exactly as
   * found (`unrecorded`). For the cleanup of an operation that made the volume itself (a failed
   * clone): such a cleanup must never remove data it did not make, and a directory without a record
   * is one it refused to touch (an upstream provisioner's volume, or another namespace's data under
   * a flat pattern). A PV's own delete leaves it unset: an upstream volume is deleted as upstream did.
   */
  readonly recordedOnly?: boolean | undefined;
}

/** What {@link VolumeRoot.archiveVolume} is told besides {@link RemoveVolumeOptions}. */
export interface ArchiveVolumeOptions extends RemoveVolumeOptions {
  /**
   * How long the archive is kept: its record gets `expiresAt` that far after `archivedAt`, and
   * {@link VolumeRoot.removeExpiredArchives} removes it after that. Absent: kept forever. An archive
   * without a record (an upstream volume's) never expires.
   */
  readonly retentionMs?: number | undefined;
}

/**
 * - `deleted`: the volume directory is gone, with its record.
 * - `missing`: there was no volume directory (any leftover record and empty parents were cleaned),
 *   or the path holds no record and is a parent of other volumes made by this package (left untouched).
 * - `unrecorded`: the directory has no record and {@link DeleteVolumeOptions.recordedOnly} was set:
 *   left untouched.
 */
export type DeleteVolumeOutcome = 'deleted' | 'missing' | 'unrecorded';

/**
 * - `released`: the record names the PV and now says the volume was released (already did, on a
 *   retry); the data stays and a claim of the same namespace may adopt it.
 * - `unrecorded`: the directory has no record (an upstream provisioner's): nothing to mark.
 * - `other-owner`: the record names another PV (the data was adopted meanwhile): nothing touched.
 * - `missing`: there was no volume directory (a record left by an interrupted delete and empty
 *   parents were cleaned).
 */
export type ReleaseVolumeOutcome = 'released' | 'unrecorded' | 'other-owner' | 'missing';

/** Result of {@link VolumeRoot.archiveVolume}. */
export type ArchiveVolumeResult =
  | { readonly outcome: 'archived'; readonly archivedPath: RelativeVolumePath }
  | { readonly outcome: 'missing' };

/** The record of `leaf`, after checking it does not name a PV other than `pvName`. */
async function recordNaming(
  dir: DirectoryHandle,
  leaf: string,
  pvName: string,
): Promise<OwnershipRecord | undefined> {
  const record = await readOwnershipRecord(dir, leaf);
  if (record !== undefined && record.pvName !== pvName) {
    throw ownershipError(dir.pathOf(leaf), `is recorded for another PV, not ${pvName}; refusing to touch it`);
  }
  return record;
}

async function dropRecord(dir: DirectoryHandle, leaf: string): Promise<void> {
  try {
    await dir.unlink(recordName(leaf));
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
}

/**
 * Stamps `removingAt` on the record before the directory goes (see {@link forgetMissing}): what an
 * archive does, and a delete of a kept volume (retained or archived), whose record a take-back reads.
 */
async function markRemoving(
  context: VolumeContext,
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord,
): Promise<void> {
  if (record.removingAt !== undefined) return;
  await writeOwnershipRecord(dir, leaf, { ...record, removingAt: timestampOf(context) }, true);
}

/**
 * The directory is gone. A record stamped `removingAt`, or one beside the directory's removal name
 * for this PV (see {@link deleteVolume}), was left by a removal of this package interrupted after the
 * directory went: it goes too, and so does that leftover. A record without either means the directory
 * was moved away by someone else: dropping the record would leave the data unprotected wherever it
 * comes back, so the removal is refused until an administrator decides.
 */
async function forgetMissing(
  dir: DirectoryHandle,
  leaf: string,
  pvName: string,
  record: OwnershipRecord | undefined,
): Promise<void> {
  // Without a record only the leftover can be there: a delete drops the record before its rmdir.
  if (record === undefined) {
    await removeLeftover(dir, removalName(leaf, pvName));
    return;
  }
  const leftover = (await dir.lstat(removalName(leaf, pvName))) !== undefined;
  if (record.removingAt !== undefined || leftover) {
    await dropRecord(dir, leaf);
    if (leftover) await removeLeftover(dir, removalName(leaf, pvName));
    return;
  }
  throw new SafeFsError({
    kind: 'ownership',
    path: dir.pathOf(leaf),
    operation: 'remove',
    detail: `is recorded for this PV but the directory is gone (moved away?); keeping its record ${JSON.stringify(recordName(leaf))}. Remove that record to let the PV go without the data`,
  });
}

/** Whether the record is of a kept volume (retained or archived), which a take-back may read. */
function isKept(record: OwnershipRecord): boolean {
  return record.releasedAt !== undefined || record.archivedAt !== undefined;
}

/**
 * The record of `leaf` after checking it names `pvName`; `leftover` when it names another PV but
 * this PV's interrupted delete left its removal name, which is then removed: that delete had dropped
 * its record, and another volume was made at `leaf` since, which stays untouched.
 */
async function recordOrLeftover(
  dir: DirectoryHandle,
  leaf: string,
  pvName: string,
): Promise<OwnershipRecord | undefined | 'leftover'> {
  try {
    return await recordNaming(dir, leaf, pvName);
  } catch (err) {
    if (!isSafeFsError(err) || err.kind !== 'ownership') throw err;
    if (!(await removeLeftover(dir, removalName(leaf, pvName)))) throw err;
    return 'leftover';
  }
}

/**
 * Runs a removal of `path` in its parent directory: guarded by the caller's check, `ifMissing`
 * when a parent is absent; `refuseNested` refuses a path below another volume.
 */
function inParent<T>(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: RemoveVolumeOptions,
  where: { readonly ifMissing: T; readonly refuseNested: boolean },
  fn: (parents: ParentChain) => Promise<T>,
): Promise<T> {
  return withParents(guardedContext(context, options.beforeEachWrite), path, where, fn);
}

/**
 * Opens volume directory `leaf` of `dir` (no `lstat` first: the open refuses a link or a non-directory
 * itself, and over NFS a lookup of its own is one more round trip); `undefined` when absent. With
 * `leaveUnrecorded` (a cleanup's delete of a directory without a record) whatever is there is left
 * as found, unopened: `unrecorded`.
 */
async function openVolume(
  dir: DirectoryHandle,
  leaf: string,
  leaveUnrecorded: boolean,
): Promise<DirectoryHandle | 'unrecorded' | undefined> {
  if (leaveUnrecorded) return (await dir.lstat(leaf)) === undefined ? undefined : 'unrecorded';
  return dir.openDirectory(leaf);
}

/** Deletes volume `path`; see {@link VolumeRoot.deleteVolume}. */
export function deleteVolume(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: DeleteVolumeOptions,
): Promise<DeleteVolumeOutcome> {
  return inParent<DeleteVolumeOutcome>(
    context,
    path,
    options,
    { ifMissing: 'missing', refuseNested: true },
    async ({ chain, parents, dir, leaf }) => {
      const { pvName } = options;
      const record = await recordOrLeftover(dir, leaf, pvName);
      if (record === 'leftover') return 'missing';
      const volume = await openVolume(dir, leaf, record === undefined && options.recordedOnly === true);
      if (volume === undefined) {
        await forgetMissing(dir, leaf, pvName, record);
        await removeEmptyParents(chain, parents);
        return 'missing';
      }
      if (volume === 'unrecorded') return 'unrecorded';
      const removed = record === undefined ? leaf : removalName(leaf, pvName);
      const stats = await volume.stat().catch(async (err: unknown) => {
        await volume.close();
        throw err;
      });
      try {
        const names = await topLevelOf(volume);
        if (record === undefined && (await isMadeParent(volume, stats, names))) return 'missing';
        await refuseHostingVolumes(volume, record !== undefined, names);
        // Nothing goes unless everything can: a refusal halfway (root_squash, another user's
        // directory) would leave a half-deleted volume.
        await assertEmptiable(volume, names);
        if (record !== undefined && isKept(record)) await markRemoving(context, dir, leaf, record);
        await emptyDirectory(volume, names);
        // What was emptied (the descriptor's identity never changes) is what is removed by name. A
        // recorded volume is renamed only now, so a delete that fails while emptying (a file held
        // open, say) leaves it where it was, with its record, for the retry.
        if (record === undefined) await assertStill(dir, leaf, stats);
        else await moveToRemovalName(dir, leaf, removed);
      } finally {
        await volume.close();
      }
      if (record !== undefined) {
        // The record before the directory: the name left over says the removal was this package's.
        await dropRecord(dir, leaf);
        await assertMoved(dir, leaf, removed, stats);
      }
      await dir.rmdir(removed);
      await removeEmptyParents(chain, parents);
      return 'deleted';
    },
  );
}

/** Archives volume `path`; see {@link VolumeRoot.archiveVolume}. */
export async function archiveVolume(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: ArchiveVolumeOptions,
): Promise<ArchiveVolumeResult> {
  const { retentionMs } = options;
  if (retentionMs !== undefined && (!Number.isSafeInteger(retentionMs) || retentionMs < 0)) {
    throw new RangeError(`invalid retentionMs ${retentionMs}`);
  }
  const missing: ArchiveVolumeResult = { outcome: 'missing' };
  return inParent(
    context,
    path,
    options,
    { ifMissing: missing, refuseNested: true },
    async ({ chain, parents, dir, leaf }) => {
      const record = await recordNaming(dir, leaf, options.pvName);
      const stats = await dir.lstat(leaf);
      if (stats === undefined) {
        await forgetMissing(dir, leaf, options.pvName, record);
        await removeEmptyParents(chain, parents);
        return missing;
      }
      if (!stats.isDirectory()) throw nonDirectoryError(dir.pathOf(leaf), stats);
      const volume = await dir.openDirectory(leaf);
      if (volume === undefined) throw vanished(dir, leaf);
      try {
        const names = await topLevelOf(volume);
        if (record === undefined && (await isMadeParent(volume, stats, names))) return missing;
        await refuseHostingVolumes(volume, record !== undefined, names);
      } finally {
        await volume.close();
      }
      if (record !== undefined) await markRemoving(context, dir, leaf, record);
      const archived = record === undefined ? undefined : archiveRecord(context, record, retentionMs);
      for (let attempt = 1; attempt <= maxArchiveAttempts; attempt++) {
        const name = archiveCandidate(leaf, options.pvName, attempt);
        if (await moveToUnused(dir, leaf, name, archived)) {
          return { outcome: 'archived', archivedPath: dir.pathOf(name) as RelativeVolumePath };
        }
      }
      throw new SafeFsError({
        kind: 'io',
        path: dir.pathOf(leaf),
        operation: 'archive',
        detail: `no free archive name after ${maxArchiveAttempts} attempts`,
      });
    },
  );
}

/** The record an archive keeps: the volume's, with when it was archived and until when it is kept. */
function archiveRecord(
  context: VolumeContext,
  record: OwnershipRecord,
  retentionMs: number | undefined,
): OwnershipRecord {
  const now = context.now();
  const { removingAt: _removing, ...kept } = record;
  return {
    ...kept,
    archivedAt: new Date(now).toISOString(),
    ...(retentionMs === undefined ? {} : { expiresAt: new Date(now + retentionMs).toISOString() }),
  };
}

/**
 * Moves `leaf` (and its record, when there is one) to `name` in the same directory unless `name`
 * is taken; returns whether it moved. A recorded volume's archive record is published exclusively
 * first, then the target reserved with `mkdir`, so `rename` only ever replaces the empty placeholder
 * made for it. A run killed after publishing finds its own record (this PV's, archived) on the retry
 * and finishes the move to the same name, instead of leaving an empty archive beside the real one.
 */
async function moveToUnused(
  dir: DirectoryHandle,
  leaf: string,
  name: string,
  record: OwnershipRecord | undefined,
): Promise<boolean> {
  const resumed = record !== undefined && (await publishArchiveRecord(dir, name, record));
  if (resumed === undefined) return false;
  const undo: Array<() => Promise<unknown>> = [];
  if (record !== undefined && !resumed) undo.push(() => dir.unlink(recordName(name)));
  try {
    try {
      await dir.mkdir(name, 0o700);
      undo.push(() => dir.rmdir(name));
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST' || !resumed || !(await isEmptyDirectory(dir, name))) {
        if (errnoCode(err) === 'EEXIST') return false;
        throw err;
      }
    }
    await dir.rename(leaf, name);
    undo.length = 0;
  } finally {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  }
  if (record !== undefined) await dropRecord(dir, leaf);
  return true;
}

/**
 * Publishes `record` as the record of archive `name`: `false` when published now, `true` when an
 * earlier run of this archive had published it, `undefined` when `name` belongs to someone else.
 */
async function publishArchiveRecord(
  dir: DirectoryHandle,
  name: string,
  record: OwnershipRecord,
): Promise<boolean | undefined> {
  let existing: OwnershipRecord | undefined;
  try {
    existing = await readOwnershipRecord(dir, name);
  } catch (err) {
    // A record that cannot be read is someone else's, as any entry of that name.
    if (isSafeFsError(err)) return undefined;
    throw err;
  }
  if (existing === undefined) {
    // An unrecorded directory of that name (upstream's archive) is never given a record.
    if ((await dir.lstat(name)) !== undefined) return undefined;
    try {
      await writeOwnershipRecord(dir, name, record, false);
      return false;
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return undefined;
      throw err;
    }
  }
  const ours = existing.pvName === record.pvName && existing.claimUid === record.claimUid;
  return ours && existing.archivedAt !== undefined && existing.removingAt === undefined ? true : undefined;
}

/** Whether `name` in `dir` is a real directory holding nothing. */
async function isEmptyDirectory(dir: DirectoryHandle, name: string): Promise<boolean> {
  const placeholder = await dir.openDirectory(name);
  if (placeholder === undefined) return false;
  try {
    return await hasNoEntries(placeholder);
  } finally {
    await placeholder.close();
  }
}

/** Releases volume `path`; see {@link VolumeRoot.releaseVolume}. */
export function releaseVolume(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: RemoveVolumeOptions,
): Promise<ReleaseVolumeOutcome> {
  return inParent<ReleaseVolumeOutcome>(
    context,
    path,
    options,
    { ifMissing: 'missing', refuseNested: false },
    async ({ chain, parents, dir, leaf }) => {
      const record = await readOwnershipRecord(dir, leaf);
      if (record !== undefined && record.pvName !== options.pvName) return 'other-owner';
      if ((await dir.lstat(leaf)) === undefined) {
        // Retaining never fails: a record whose directory moved away is kept, protecting the data.
        if (record?.removingAt !== undefined || (record !== undefined && options.recordIsStale === true)) {
          await dropRecord(dir, leaf);
        }
        await removeEmptyParents(chain, parents);
        return 'missing';
      }
      if (record === undefined) return 'unrecorded';
      // A retry keeps the first time, which is when the data was let go.
      if (record.releasedAt === undefined) {
        await writeOwnershipRecord(dir, leaf, { ...record, releasedAt: timestampOf(context) }, true);
      }
      return 'released';
    },
  );
}
