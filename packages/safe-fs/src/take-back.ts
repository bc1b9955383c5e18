/**
 * Taking back the data of an archived or retained volume for a new claim: the old directory is found
 * by its record, reserved for the claim, and renamed into the claim's new volume directory inside the
 * same base (no copy). Every step leaves a state the claim's retry recognises and finishes:
 *
 * 1. the old record is replaced, under the adoption lock, by one naming the new claim with
 *    `takenFrom` (a second claim asking for the data is refused from here on);
 * 2. the new volume is created as usual (record first, then an empty directory);
 * 3. its record gets `takenFrom`, so it says where its data comes from before the data arrives;
 * 4. the old directory is renamed over the empty new one (`rename(2)` never replaces one with data);
 * 5. the old record goes, then the old parents this package made if they are now empty.
 */

import { ownershipError } from './adoption.ts';
import { type CreateVolumeOptions, createVolume } from './create-volume.ts';
import { nonDirectoryError } from './directory-handle.ts';
import { errnoCode, isSafeFsError, SafeFsError } from './errors.ts';
import { changeRecordLocked, type LockedRecordOutcome, sameRecord } from './locked-record-change.ts';
import { type OwnershipRecord, readOwnershipRecord, writeOwnershipRecord } from './ownership-record.ts';
import { type ParentChain, removeEmptyParents, withParents } from './parent-chain.ts';
import { findVolumesOfPv, holdsDataOf, isTakingBack, type RecordedVolume } from './recorded-volume-search.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { recordName } from './reserved-names.ts';
import { newRecord, type VolumeContext } from './volume-context.ts';
import { refuseParentAsVolume } from './volume-like.ts';
import { guardedContext } from './write-guard.ts';

/** What {@link VolumeRoot.takeBackVolume} is asked: a new volume, created with the data of an old PV. */
export interface TakeBackOptions
  extends Omit<CreateVolumeOptions, 'adopt' | 'namespaceScopedPath' | 'adoptAmbiguousNamespacePrefix'> {
  /** The PV whose archived or retained data the new volume takes; found by the records naming it. */
  readonly fromPvName: string;
  /**
   * Namespaces besides `owner.namespace` whose data the claim may take, or `*` for any. Default
   * none: only a claim of the namespace the data belonged to gets it.
   */
  readonly fromNamespaces?: readonly string[] | '*' | undefined;
  /**
   * How deep to look for the old volume in directories this package did not make as parents (those
   * it made are always searched). Default 4.
   */
  readonly maxDepth?: number | undefined;
  /**
   * Called when the new volume cannot be made and the data, already reserved for the claim, is given
   * back (the old record put back with its expiry) before the refusal is thrown; `message` says so,
   * naming only the new path, for an event on the claim.
   */
  readonly onReleased?: ((message: string) => void) | undefined;
}

/**
 * - `taken-back`: this call moved the data (or finished a move an interrupted call began).
 * - `reused`: an earlier call had already moved it; the volume was checked again.
 */
export type TakeBackOutcome = 'taken-back' | 'reused';

/** Result of {@link VolumeRoot.takeBackVolume}. */
export interface TakeBackResult {
  readonly outcome: TakeBackOutcome;
  /** Where the data was, relative to the base; `undefined` when an earlier call moved it. */
  readonly from: RelativeVolumePath | undefined;
}

/**
 * An archive expiring this soon is refused: a take-back reserving it would win over the retention
 * sweep (both change the record under its lock), but the claim should not count on data that is due.
 */
export const takeBackExpiryMarginMs = 60_000;
const defaultMaxDepth = 4;

function checkTakeBackOptions(options: TakeBackOptions): void {
  if (options.fromPvName === '') throw new RangeError('fromPvName must not be empty');
  if (options.fromPvName === options.owner.pvName) {
    throw new RangeError('a volume cannot take back its own data');
  }
}

/** Takes back the data of `options.fromPvName` into volume `path`; see {@link VolumeRoot.takeBackVolume}. */
export async function takeBackVolume(
  unguarded: VolumeContext,
  path: RelativeVolumePath,
  options: TakeBackOptions,
): Promise<TakeBackResult> {
  checkTakeBackOptions(options);
  const context = guardedContext(unguarded, options.beforeEachWrite);
  const { fromPvName: from, owner } = options;
  const found = await findVolumesOfPv(context, from, options.maxDepth ?? defaultMaxDepth);
  if (takenByAnother(found, options)) throw alreadyTaken(path, from);
  const here = found.find((volume) => volume.path === path && volume.record.claimUid === owner.claimUid);
  // Reserved for this claim by an interrupted call, else the data as its PV left it.
  const resumed = found.find(
    (volume) => volume !== here && volume.record.claimUid === owner.claimUid && isTakingBack(volume.record),
  );
  const originals = found.filter((volume) => holdsDataOf(volume.record, from));
  if (resumed === undefined && originals.length > 1) {
    throw ownershipError(
      path,
      `cannot take back the data of ${from}: several directories are recorded for it; an administrator must remove all but one`,
    );
  }
  const source = resumed ?? originals[0];
  if (source === undefined) {
    if (here === undefined) throw await whyGone(context, path, options);
    // Moved by an earlier call: only the volume's mode and owner are applied again.
    await createVolume(context, path, options);
    return { outcome: 'reused', from: undefined };
  }
  if (source !== resumed) {
    checkSource(source, path, options, context.now());
    // Refused before the data is reserved, which only this claim's retries could finish.
    if (source.path !== path) await refuseOccupied(context, path, options);
    if (!(await reserve(context, source, path, options))) throw await whyGone(context, path, options);
  }
  try {
    await createVolume(context, path, options);
    await markTarget(context, path, options);
    if (source.path !== path) await moveData(context, source.path, path, options);
  } catch (err) {
    if (isSafeFsError(err) && err.kind !== 'io') await release(context, source.path, path, options, err);
    throw err;
  }
  return { outcome: 'taken-back', from: source.path };
}

/** Whether a claim other than this one is taking the data or took it. */
function takenByAnother(found: readonly RecordedVolume[], { fromPvName, owner }: TakeBackOptions): boolean {
  return found.some(
    ({ record }) =>
      isTakingBack(record) && record.takenFrom === fromPvName && record.claimUid !== owner.claimUid,
  );
}

/**
 * The refusal when the data was not found, or went while this call reserved it: taken by another
 * claim, or not there. One search can miss a take-back under way, as it reads the old and the new
 * directory at different times; a second one cannot: the old directory's record (original, then
 * reserved) stays until the new volume's record names the data, so a search that missed both read
 * the old place after the move ended, and every search begun after that sees the new record.
 */
async function whyGone(context: VolumeContext, path: RelativeVolumePath, options: TakeBackOptions) {
  const now = await findVolumesOfPv(context, options.fromPvName, options.maxDepth ?? defaultMaxDepth);
  return takenByAnother(now, options)
    ? alreadyTaken(path, options.fromPvName)
    : notFound(path, options.fromPvName);
}

function notFound(path: string, from: string) {
  return ownershipError(
    path,
    `no archived or retained directory is recorded for ${from}; its data may be deleted, still in use, or not yet archived (try again after its PV is gone)`,
  );
}

function alreadyTaken(path: string, from: string) {
  return ownershipError(path, `the data of ${from} is taken back by another claim`);
}

/**
 * Refuses data that is not free to take: still used by its PV, being removed, about to expire, or
 * of another namespace than the claim's (unless `fromNamespaces` says otherwise).
 */
function checkSource(
  { record }: RecordedVolume,
  path: RelativeVolumePath,
  options: TakeBackOptions,
  now: number,
): void {
  const { fromPvName: from, owner, fromNamespaces } = options;
  const allowed =
    record.namespace === owner.namespace ||
    fromNamespaces === '*' ||
    (fromNamespaces?.includes(record.namespace) ?? false);
  // Checked first, and every message names only the new path: they end up in an event this tenant
  // reads, which must not tell where another namespace's data lives or what state it is in.
  if (!allowed) {
    throw ownershipError(
      path,
      `the data of ${from} belongs to another namespace than ${JSON.stringify(owner.namespace)}; the StorageClass does not allow taking it back across namespaces`,
    );
  }
  if (record.releasedAt === undefined && record.archivedAt === undefined) {
    throw ownershipError(
      path,
      `the data of ${from} is still in use by its PV; only archived or retained data can be taken back`,
    );
  }
  if (record.removingAt !== undefined) throw ownershipError(path, `the data of ${from} is being deleted`);
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now + takeBackExpiryMarginMs) {
    throw ownershipError(
      path,
      `the archive of ${from} has expired (or does within a minute) and is being removed`,
    );
  }
}

/** Refuses a new volume path that already belongs to another claim. */
async function refuseOccupied(context: VolumeContext, path: RelativeVolumePath, options: TakeBackOptions) {
  const where = { ifMissing: undefined, refuseNested: false, readOnly: true };
  const record = await withParents(context, path, where, ({ dir, leaf }) => readOwnershipRecord(dir, leaf));
  if (record !== undefined && record.claimUid !== options.owner.claimUid) {
    throw ownershipError(path, 'belongs to another claim; cannot take data back into it');
  }
}

/** Runs `fn` in the parent of `path`; a missing parent means the volume went meanwhile. */
function inParent<T>(
  context: VolumeContext,
  path: RelativeVolumePath,
  fn: (parents: ParentChain) => Promise<T>,
) {
  const missing = Symbol('missing');
  return withParents<T | typeof missing>(context, path, { ifMissing: missing, refuseNested: true }, fn).then(
    (result) => {
      if (result === missing) throw ownershipError(path, 'vanished while its data was being taken back');
      return result;
    },
  );
}

/** `record` without the record it replaced, which is kept one level deep only. */
function withoutOriginal({ original: _replaced, ...record }: OwnershipRecord): OwnershipRecord {
  return record;
}

/**
 * Step 1: replaces the source's record, under its lock (see `locked-record-change.ts`), with one
 * naming the claim (`takenFrom` set) that keeps the archive's expiry and the record it replaced.
 * Of two claims asking at once exactly one wins, and the retention sweep never removes it meanwhile.
 * `false` when the source went meanwhile (moved by another claim, or removed).
 */
function reserve(
  context: VolumeContext,
  source: RecordedVolume,
  target: RelativeVolumePath,
  options: TakeBackOptions,
): Promise<boolean> {
  const { fromPvName: from, owner } = options;
  const original = withoutOriginal(source.record);
  const reserved: OwnershipRecord = {
    ...newRecord(context, owner),
    takenFrom: from,
    expiresAt: original.expiresAt,
    original,
  };
  const check = async ({ dir, leaf }: ParentChain, current: OwnershipRecord) => {
    checkSource({ path: source.path, record: current }, target, options, context.now());
    const stats = await dir.lstat(leaf);
    if (stats === undefined) throw ownershipError(source.path, 'is recorded, but its directory is gone');
    if (!stats.isDirectory()) throw nonDirectoryError(source.path, stats);
    const volume = await dir.openDirectory(leaf);
    if (volume === undefined) throw ownershipError(source.path, 'vanished while being taken back');
    try {
      // Marks of a nesting race: moving the directory would take another volume's data along.
      await refuseParentAsVolume(volume);
    } finally {
      await volume.close();
    }
  };
  const missing = Symbol('missing');
  const where = { ifMissing: missing, refuseNested: true } as const;
  return withParents<boolean | typeof missing>(context, source.path, where, async (parents) => {
    const { dir, leaf } = parents;
    let result: LockedRecordOutcome;
    try {
      result = await changeRecordLocked(dir, leaf, {
        basis: original,
        replacement: reserved,
        resume: (holder) =>
          holder.claimUid === owner.claimUid && holder.takenFrom === from ? holder.original : undefined,
        check: (current) => check(parents, current),
      });
    } catch (err) {
      // The directory the lock goes into was removed: the parent of data another claim moved.
      if (errnoCode(err) === 'ENOENT') return false;
      throw err;
    }
    if (result.outcome === 'changed') return true;
    const record = result.outcome === 'held' ? result.holder : result.current;
    if (record === undefined) return false;
    if (record.removingAt !== undefined) throw ownershipError(target, `the data of ${from} is being deleted`);
    if (record.takenFrom !== undefined) throw alreadyTaken(target, from);
    // Released, archived again or otherwise rewritten since it was found: checked afresh.
    checkSource({ path: source.path, record }, target, options, context.now());
    throw new SafeFsError({
      kind: 'io',
      path: target,
      operation: 'take back',
      detail: `the record of the data of ${from} changed while it was being reserved; will look again`,
    });
  }).then((result) => result !== missing && result);
}

/**
 * A take-back that cannot complete (its new path is refused) gives the data back: the new volume's
 * record stops naming it, then the old record is put back as it was, under its lock, with its
 * expiry, so the retention sweep and other claims see the archive again. Nothing is given back once
 * the data has moved. The caller hears of it through {@link TakeBackOptions.onReleased}; the
 * refusal itself is still thrown. A release that fails leaves the reservation for the next retry.
 */
async function release(
  context: VolumeContext,
  from: RelativeVolumePath,
  to: RelativeVolumePath,
  options: TakeBackOptions,
  refusal: SafeFsError,
): Promise<void> {
  const { fromPvName, owner } = options;
  const ours = (record: OwnershipRecord | undefined) =>
    record?.claimUid === owner.claimUid && record.takenFrom === fromPvName;
  try {
    if (from !== to) {
      const where = { ifMissing: undefined, refuseNested: false };
      await withParents(context, to, where, async ({ dir, leaf }) => {
        const record = await readOwnershipRecord(dir, leaf);
        if (record === undefined || !ours(record)) return;
        const { takenFrom: _unmarked, ...unmarked } = record;
        await writeOwnershipRecord(dir, leaf, unmarked, true);
      });
    }
    const released = await inParent(context, from, async ({ dir, leaf }) => {
      const reserved = await readOwnershipRecord(dir, leaf);
      if (reserved?.original === undefined || !ours(reserved)) return false;
      if ((await dir.lstat(leaf)) === undefined) return false;
      const { original } = reserved;
      const result = await changeRecordLocked(dir, leaf, {
        basis: reserved,
        replacement: original,
        resume: (holder) => (sameRecord(holder, original) ? reserved : undefined),
      });
      return result.outcome === 'changed';
    });
    if (released) {
      options.onReleased?.(
        `released the data of ${fromPvName}, kept as it was before this claim asked for it: ${refusal.message}`,
      );
    }
  } catch {
    // The refusal is what the caller must hear; the reservation stays for the retry to release.
  }
}

/**
 * Step 3: the new volume's record says it takes the data of `fromPvName`. Taken over in place, that
 * record is the reservation, which drops what it kept for a release: the data is the claim's now.
 */
function markTarget(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: TakeBackOptions,
): Promise<void> {
  return inParent(context, path, async ({ dir, leaf }) => {
    const record = await readOwnershipRecord(dir, leaf);
    if (record?.claimUid !== options.owner.claimUid) {
      throw ownershipError(path, 'changed owner while data was being taken back into it');
    }
    const { original, expiresAt, ...kept } = record;
    if (record.takenFrom === options.fromPvName && original === undefined && expiresAt === undefined) return;
    await writeOwnershipRecord(dir, leaf, { ...kept, takenFrom: options.fromPvName }, true);
  });
}

/**
 * Steps 4 and 5: renames the reserved directory over the new, empty one, then drops its old record
 * and the old parents this package made that are now empty. A directory already gone was moved by
 * an interrupted call (its record, reserved for this claim, says so).
 */
function moveData(
  context: VolumeContext,
  from: RelativeVolumePath,
  to: RelativeVolumePath,
  options: TakeBackOptions,
): Promise<void> {
  return inParent(context, to, (target) =>
    inParent(context, from, async ({ chain, parents, dir, leaf }) => {
      const record = await readOwnershipRecord(dir, leaf);
      if (record?.claimUid !== options.owner.claimUid || record.takenFrom !== options.fromPvName) {
        throw ownershipError(from, 'changed owner while its data was being taken back');
      }
      if ((await dir.lstat(leaf)) !== undefined) {
        try {
          await dir.renameInto(leaf, target.dir, target.leaf);
        } catch (err) {
          const code = errnoCode(err);
          if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
          throw ownershipError(
            to,
            'already holds data; the data taken back would replace it, so it stays where it is',
          );
        }
      }
      await dir.unlink(recordName(leaf));
      await removeEmptyParents(chain, parents);
    }),
  );
}
