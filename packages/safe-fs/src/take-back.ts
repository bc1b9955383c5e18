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
import { errnoCode } from './errors.ts';
import { type OwnershipRecord, readOwnershipRecord, writeOwnershipRecord } from './ownership-record.ts';
import { type ParentChain, removeEmptyParents, withParents } from './parent-chain.ts';
import { findVolumesOfPv, type RecordedVolume } from './recorded-volume-search.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { adoptionLockName, recordName } from './reserved-names.ts';
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
 * An archive expiring this soon is refused: the retention sweep may already be removing it, and a
 * take-back must finish its reservation (which drops `expiresAt`) before the sweep reads the record.
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
  if (found.some(({ record }) => record.takenFrom === from && record.claimUid !== owner.claimUid)) {
    throw alreadyTaken(path, from);
  }
  const here = found.find((volume) => volume.path === path && volume.record.claimUid === owner.claimUid);
  // Reserved for this claim by an interrupted call, else the data as its PV left it.
  const resumed = found.find((volume) => volume !== here && volume.record.claimUid === owner.claimUid);
  const originals = found.filter((volume) => volume.record.takenFrom === undefined);
  if (resumed === undefined && originals.length > 1) {
    throw ownershipError(
      path,
      `cannot take back the data of ${from}: several directories are recorded for it; an administrator must remove all but one`,
    );
  }
  const source = resumed ?? originals[0];
  if (source === undefined) {
    if (here === undefined) throw notFound(path, from);
    // Moved by an earlier call: only the volume's mode and owner are applied again.
    await createVolume(context, path, options);
    return { outcome: 'reused', from: undefined };
  }
  if (source !== resumed) {
    checkSource(source, path, options, context.now());
    // Refused before the data is reserved, which only this claim's retries could finish.
    if (source.path !== path) await refuseOccupied(context, path, options);
    try {
      await reserve(context, source, path, options);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
      // The source's directory went while this call reserved it: another claim took the data (and
      // removed the emptied parents), or it was removed. Say which.
      const now = await findVolumesOfPv(context, from, options.maxDepth ?? defaultMaxDepth);
      if (now.some(({ record }) => record.takenFrom === from && record.claimUid !== owner.claimUid)) {
        throw alreadyTaken(path, from);
      }
      throw notFound(path, from);
    }
  }
  await createVolume(context, path, options);
  if (source.path !== path) {
    await markTarget(context, path, options);
    await moveData(context, source.path, path, options);
  }
  return { outcome: 'taken-back', from: source.path };
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

/**
 * Step 1: replaces the source's record with one naming the claim (`takenFrom` set), as an adopting
 * claim replaces a released record: published exclusively as the adoption lock first, so of two
 * claims asking at once exactly one wins, and the record is checked again by the lock's holder only.
 */
function reserve(
  context: VolumeContext,
  source: RecordedVolume,
  target: RelativeVolumePath,
  options: TakeBackOptions,
): Promise<void> {
  return inParent(context, source.path, async ({ dir, leaf }) => {
    const lock = adoptionLockName(leaf);
    const reserved: OwnershipRecord = { ...newRecord(context, options.owner), takenFrom: options.fromPvName };
    try {
      await writeOwnershipRecord(dir, leaf, reserved, false, lock);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      const held = await readOwnershipRecord(dir, leaf, lock);
      if (held?.claimUid !== options.owner.claimUid) throw alreadyTaken(target, options.fromPvName);
    }
    try {
      const current = await readOwnershipRecord(dir, leaf);
      if (current === undefined || current.pvName !== options.fromPvName || current.takenFrom !== undefined) {
        throw alreadyTaken(target, options.fromPvName);
      }
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
      await dir.rename(lock, recordName(leaf));
    } catch (err) {
      await dir.unlink(lock).catch(() => undefined);
      throw err;
    }
  });
}

/** Step 3: the new volume's record says it takes the data of `fromPvName`. */
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
    if (record.takenFrom === options.fromPvName) return;
    await writeOwnershipRecord(dir, leaf, { ...record, takenFrom: options.fromPvName }, true);
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
