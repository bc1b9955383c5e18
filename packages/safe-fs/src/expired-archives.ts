/**
 * Archive retention: finds archives whose record says they have expired and removes them, each as a
 * delete of its own (record checked, stamped, tree emptied without following links, record last), so
 * a removal interrupted anywhere is finished by the next sweep. An archive without a record is never
 * touched: nothing says when it was made or whose it was.
 */

import { archivePrefix } from './archive-name.ts';
import { type DirectoryHandle, openBase } from './directory-handle.ts';
import { changeRecordLocked } from './locked-record-change.ts';
import { type OwnershipRecord, readOwnershipRecord } from './ownership-record.ts';
import { withParents } from './parent-chain.ts';
import { walkParentLevels } from './parent-levels-walk.ts';
import { enterParent, isTakingBack } from './recorded-volume-search.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { deleteVolume } from './remove-volume.ts';
import { isReservedName } from './reserved-names.ts';
import { timestampOf, type VolumeContext } from './volume-context.ts';
import { looksLikeVolume } from './volume-like.ts';
import { guardedContext, type WriteGuard } from './write-guard.ts';

/** Options of {@link VolumeRoot.removeExpiredArchives}. */
export interface ExpiredArchivesOptions {
  /** Checked before every change to the file system, as for a delete (see {@link WriteGuard}). */
  readonly beforeEachWrite?: WriteGuard | undefined;
  /**
   * How deep to look for archives in directories this package did not make as parents (those it
   * made are always searched). Default 4.
   */
  readonly maxDepth?: number | undefined;
  /**
   * Sizes each recorded archive, in bytes (`undefined`: not measured, counted as nothing): an
   * expired one right before its removal, the kept ones once the removals are done, so that sizing
   * never delays a removal behind a kept archive. With it the report has
   * {@link ExpiredArchivesReport.bytes}.
   */
  readonly measure?: ((path: RelativeVolumePath) => Promise<number | undefined>) | undefined;
}

/** What a sweep found and did; paths relative to the base. */
export interface ExpiredArchivesReport {
  /** Archives removed because their time had come. */
  readonly removed: readonly RelativeVolumePath[];
  /** Archives with a record that are kept: not expired yet, or kept forever. */
  readonly kept: number;
  /** The earliest `expiresAt` among the kept archives, if any expires. */
  readonly nextExpiry: string | undefined;
  /** Archives whose removal failed this time, with the reason; the next sweep tries again. */
  readonly failed: ReadonlyArray<{ readonly path: string; readonly error: string }>;
  /** With {@link ExpiredArchivesOptions.measure}: what the kept archives hold, and the removed ones held. */
  readonly bytes?: { readonly kept: number; readonly removed: number } | undefined;
}

interface Found {
  readonly path: RelativeVolumePath;
  readonly record: OwnershipRecord;
}

/**
 * Whether the archive's time has come: expired, and not being taken back. A reservation keeps the
 * archive's expiry, but the claim holding it finishes the move or gives the data back.
 */
function isExpired({ record }: Found, now: number): boolean {
  return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now && !isTakingBack(record);
}

/** Removes the archives below the base whose `expiresAt` has passed; see {@link VolumeRoot.removeExpiredArchives}. */
export async function removeExpiredArchives(
  context: VolumeContext,
  options: ExpiredArchivesOptions = {},
): Promise<ExpiredArchivesReport> {
  const archives: Found[] = [];
  const base = await openBase(context.fs, context.base);
  try {
    await findArchives(base, options.maxDepth ?? 4, archives);
  } finally {
    await base.close();
  }
  const now = context.now();
  const expired = archives.filter((archive) => isExpired(archive, now));
  const kept = archives.filter((archive) => !expired.includes(archive));
  const removed: RelativeVolumePath[] = [];
  const failed: Array<{ path: string; error: string }> = [];
  const { measure } = options;
  const bytes = { kept: 0, removed: 0 };
  for (const archive of expired) {
    const size = await measure?.(archive.path);
    try {
      if (!(await stampRemoving(context, archive, options.beforeEachWrite))) {
        kept.push(archive);
        continue;
      }
      await deleteVolume(context, archive.path, {
        pvName: archive.record.pvName,
        beforeEachWrite: options.beforeEachWrite,
      });
      removed.push(archive.path);
      bytes.removed += size ?? 0;
    } catch (err) {
      // A lost leadership term ends the whole sweep; anything else is this archive's own problem.
      if (options.beforeEachWrite !== undefined) options.beforeEachWrite();
      failed.push({ path: archive.path, error: err instanceof Error ? err.message : String(err) });
    }
  }
  if (measure !== undefined) for (const archive of kept) bytes.kept += (await measure(archive.path)) ?? 0;
  // A reservation's or a skipped archive's expiry has passed: it says nothing of the next sweep.
  const expiries = kept.flatMap(({ record }) =>
    record.expiresAt === undefined || Date.parse(record.expiresAt) <= now ? [] : [record.expiresAt],
  );
  const report = { removed, kept: kept.length, nextExpiry: expiries.sort()[0], failed };
  return measure === undefined ? report : { ...report, bytes };
}

/**
 * Stamps an expired archive's record `removingAt` under its lock, the change a take-back's
 * reservation also makes under it (see `locked-record-change.ts`): of the two exactly one happens.
 * `false` when the archive is no longer due: a take-back holds the lock or reserved it, or the
 * record changed (its expiry is read again) or went. An archive already stamped by an interrupted
 * sweep is taken as is: no take-back reserves a record being removed.
 */
async function stampRemoving(
  context: VolumeContext,
  { path, record }: Found,
  beforeEachWrite: WriteGuard | undefined,
): Promise<boolean> {
  if (record.removingAt !== undefined) return true;
  const where = { ifMissing: false, refuseNested: true };
  return withParents(guardedContext(context, beforeEachWrite), path, where, async ({ dir, leaf }) => {
    const stamped = { ...record, removingAt: timestampOf(context) };
    const result = await changeRecordLocked(dir, leaf, {
      basis: record,
      replacement: stamped,
      // A lock of an interrupted sweep: the record it was stamping, which is still due.
      resume: ({ removingAt, ...basis }) => (removingAt === undefined ? undefined : basis),
      check: async (current) => {
        if (!isExpired({ path, record: current }, context.now())) throw notDue;
      },
    }).catch((err: unknown) => {
      if (err === notDue) return undefined;
      throw err;
    });
    return result?.outcome === 'changed';
  });
}

const notDue = new Error('not due');

/**
 * Collects the recorded archives in `top` and below. Volumes are never entered (an archive inside
 * one is tenant data); other directories are entered when this package made them as parents, or
 * while their depth is below `maxDepth`.
 */
function findArchives(top: DirectoryHandle, maxDepth: number, found: Found[]): Promise<void> {
  return walkParentLevels(
    top,
    async ({ dir, depth, recordInBatch, hasRecord }, name) => {
      if (isReservedName(name)) return undefined;
      const volumeLike = looksLikeVolume(name) || recordInBatch(name);
      if (volumeLike && !name.startsWith(archivePrefix)) return undefined;
      if ((await dir.lstat(name))?.isDirectory() !== true) return undefined;
      if (volumeLike || (await hasRecord(name))) {
        if (!name.startsWith(archivePrefix)) return undefined;
        const record = await readOwnershipRecord(dir, name);
        if (record !== undefined) found.push({ path: dir.pathOf(name) as RelativeVolumePath, record });
        return undefined;
      }
      return enterParent(dir, name, depth, maxDepth);
    },
    { operation: 'search', detail: 'was moved while being searched for archives; will look again' },
  );
}
