/**
 * Creating a volume directory: missing parents (each marked as made by this package), the
 * ownership record, then the directory itself, with permissions set through its own descriptor.
 */

import { type AdoptionRequest, checkAdoption, ownershipError, replaceReleased } from './adoption.ts';
import {
  type DirectoryHandle,
  type EntryName,
  nonDirectoryError,
  openBase,
  sameIdentity,
} from './directory-handle.ts';
import { batchesOf, findEntry, hasNoEntries } from './directory-listing.ts';
import { errnoCode, SafeFsError } from './errors.ts';
import { type OwnershipRecord, readOwnershipRecord, writeOwnershipRecord } from './ownership-record.ts';
import { closeAll, removeCreatedParent, split } from './parent-chain.ts';
import { isParentInProgress, parentInProgressMode, writeParentMarker } from './parent-marker.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { isReservedName, recordName } from './reserved-names.ts';
import { newRecord, timestampOf, type VolumeContext } from './volume-context.ts';
import { refuseParentAsVolume, refuseVolumeParent } from './volume-like.ts';
import { guardedContext, type WriteGuard } from './write-guard.ts';

/** What {@link VolumeRoot.createVolume} applies and records. */
export interface CreateVolumeOptions extends AdoptionRequest {
  /**
   * Permission bits (up to `0o7777`, so setgid works) set explicitly on the volume directory; not
   * `0o1700`, which marks a parent directory while it is being made or removed.
   */
  readonly mode: number;
  /**
   * Permission bits of the parent directories a create makes; default `0o755` (upstream's): only
   * the provisioner may add, rename or remove entries beside volumes, which keeps workloads from
   * swapping each other's volumes or records. Set `0o777` for the old behaviour. Not `0o1700`.
   */
  readonly parentMode?: number | undefined;
  /**
   * Place the volume only below directories this package made as parents: an existing directory
   * made by anyone else is refused, since its owner could swap the volume's path for a link. For
   * volumes mounted by following links on the host (hostPath); default `false`.
   */
  readonly ownParentsOnly?: boolean | undefined;
  /** Owner set on every directory created; unchanged when absent. */
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
  /**
   * Take over an existing directory not recorded for this claim: a record the PV released
   * ({@link VolumeRoot.releaseVolume}) that names the claim's namespace, a record naming this very
   * PV, or unrecorded data when {@link CreateVolumeOptions.namespaceScopedPath} also holds (then
   * also an unrecorded parent named like a volume may hold the new volume). Another claim's live
   * volume is never taken over.
   */
  readonly adopt?: boolean | undefined;
  /**
   * The caller's word that only claims of `owner.namespace` can render this path, because its
   * pattern starts with the namespace (`${.PVC.namespace}/…`, or flat `${.PVC.namespace}-…` as
   * upstream's default, where the path must then start with `<namespace>-`). Needed, with `adopt`,
   * to take over unrecorded data. Flat patterns keep one documented ambiguity: namespace `a` with
   * claim `b-c` renders what namespace `a-b` with claim `c` does.
   */
  readonly namespaceScopedPath?: boolean | undefined;
  /**
   * Checked before every change to the file system (see {@link WriteGuard}); a provisioner passes
   * `context.assertLeader`. When it throws, nothing made so far is removed again.
   */
  readonly beforeEachWrite?: WriteGuard | undefined;
}

/**
 * - `created`: this call made the volume directory.
 * - `reused`: it already existed with a record for the same claim UID (a retried or concurrent
 *   provision of the same claim); mode and owner were applied again.
 * - `adopted`: an existing directory was taken over under {@link CreateVolumeOptions.adopt}; its mode
 *   and owner were left as found.
 */
export type CreateVolumeOutcome = 'created' | 'reused' | 'adopted';

const defaultParentMode = 0o755;
// A competing provision can change the leaf between our reads; after this many attempts (the
// first of which may publish without reading, see `claimLeaf`) the caller retries later.
const maxClaimAttempts = 4;

type Undo = Array<() => Promise<unknown>>;

function checkMode(mode: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new RangeError(`invalid mode ${mode}`);
  if (mode === parentInProgressMode) {
    throw new RangeError(`mode 0o1700 is reserved: it marks a parent directory being made or removed`);
  }
}

function checkCreateOptions(options: CreateVolumeOptions): void {
  const { mode, parentMode, uid, gid, owner } = options;
  checkMode(mode);
  if (parentMode !== undefined) checkMode(parentMode);
  for (const id of [uid, gid]) {
    if (id !== undefined && (!Number.isInteger(id) || id < 0)) throw new RangeError(`invalid uid/gid ${id}`);
  }
  if (owner.claimUid === '') throw new RangeError('owner.claimUid must not be empty');
}

/** Creates volume `path`; see {@link VolumeRoot.createVolume}. */
export async function createVolume(
  unguarded: VolumeContext,
  path: RelativeVolumePath,
  options: CreateVolumeOptions,
): Promise<CreateVolumeOutcome> {
  checkCreateOptions(options);
  const context = guardedContext(unguarded, options.beforeEachWrite);
  const { parents, leaf } = split(path);
  const chain: DirectoryHandle[] = [];
  const undo: Undo = [];
  try {
    // Path-only: every step below that decides anything is checked by the server itself (an
    // exclusive symlink, an exclusive mkdir, the new directory listed), so the base need not be
    // revalidated first, which over NFS costs a GETATTR per create (decisions/safe-fs.md).
    let dir = await openBase(context.fs, context.base, true);
    chain.push(dir);
    for (const name of parents) {
      dir = await openOrCreateParent(context, dir, name, options, undo);
      chain.push(dir);
    }
    await context.touch(dir);
    return await claimLeaf(context, dir, leaf, options, undo);
  } catch (err) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw err;
  } finally {
    await closeAll(chain);
  }
}

/** Opens existing parent `name`, refusing one that is a volume; `undefined` when absent. */
async function openExistingParent(
  dir: DirectoryHandle,
  name: string,
  options: CreateVolumeOptions,
): Promise<DirectoryHandle | undefined> {
  const existing = await dir.openDirectory(name);
  if (existing === undefined) return undefined;
  try {
    await refuseVolumeParent(dir, name, existing, {
      allowUnrecorded: options.adopt === true && options.namespaceScopedPath === true,
      ownParentsOnly: options.ownParentsOnly === true,
    });
  } catch (err) {
    await existing.close();
    throw err;
  }
  return existing;
}

/**
 * Opens parent `name`, making it when absent. A volume of that name publishes its record before its
 * `mkdir`, so a record without a directory is a volume being made: refused. A parent is made with
 * {@link parentInProgressMode} and keeps it until its marker exists, so a volume create whose `mkdir`
 * of the same name loses to this one sees a parent, never an empty directory it could take for its
 * own; one whose `mkdir` wins makes this `mkdir` fail, and its record is then seen.
 */
async function openOrCreateParent(
  context: VolumeContext,
  dir: DirectoryHandle,
  name: string,
  options: CreateVolumeOptions,
  undo: Undo,
): Promise<DirectoryHandle> {
  const existing = await openExistingParent(dir, name, options);
  if (existing !== undefined) return existing;
  if ((await dir.lstat(recordName(name))) !== undefined) {
    throw ownershipError(dir.pathOf(name), 'is a volume being made; volumes cannot be nested');
  }
  let child: DirectoryHandle;
  try {
    child = await makeDirectory(dir, name, parentInProgressMode, options, undo, true);
  } catch (err) {
    // Another provision created it between our open and mkdir: use theirs, it is not ours to mark.
    const raced = errnoCode(err) === 'EEXIST' ? await openExistingParent(dir, name, options) : undefined;
    if (raced === undefined) throw err;
    return raced;
  }
  try {
    undo.push(() => removeCreatedParent(dir, child, name, true));
    await writeParentMarker(
      child,
      `${JSON.stringify({ createdFor: options.owner.pvName, createdAt: timestampOf(context) })}\n`,
    );
    await child.setAttributes(options.parentMode ?? defaultParentMode, options.uid, options.gid);
  } catch (err) {
    // The caller never sees this handle: close it after the undo steps that use it (run in reverse).
    undo.unshift(() => child.close());
    throw err;
  }
  return child;
}

/**
 * Makes directory `name` private first (0700), opens it and checks it is still what `mkdir` made,
 * then sets owner and mode through its descriptor, so neither the umask nor a window with wider
 * permissions decides the result. The returned handle is open; closing it is the caller's.
 */
async function makeDirectory(
  dir: DirectoryHandle,
  name: string,
  mode: number,
  options: CreateVolumeOptions,
  undo: Undo,
  isParent: boolean,
): Promise<DirectoryHandle> {
  await dir.mkdir(name, isParent ? mode : 0o700);
  undo.push(() => dir.rmdir(name));
  // A volume is only checked and given its attributes through this handle: path-only will do.
  const child = await dir.openDirectory(name, !isParent);
  if (child === undefined) {
    throw new SafeFsError({
      kind: 'io',
      path: dir.pathOf(name),
      operation: 'open',
      detail: 'vanished after mkdir',
    });
  }
  try {
    await checkFresh(dir, name, child, isParent);
    // A parent keeps its in-progress mode (the umask may have cleared none of it, or the sticky bit
    // on a file system that drops it from mkdir) until its marker is written.
    if (!isParent) await child.setAttributes(mode, options.uid, options.gid);
    else if (!isParentInProgress(await child.stat())) await child.setAttributes(mode, undefined, undefined);
  } catch (err) {
    await child.close();
    throw err;
  }
  return child;
}

/**
 * Node.js has no `mkdirat`/`openat`, so a directory is opened by name after `mkdir`: whoever can
 * write the parent could swap another directory in between, which would then be chowned,
 * chmodded and handed out. What was opened must still be the listed entry and hold nothing but
 * what a concurrent provision of this package puts there: nothing, for a volume (no workload has
 * it yet); for a parent, records, parent markers, volumes with records, and parents being made
 * (empty, or holding a parent marker). Another tenant's directory holds its data.
 */
async function checkFresh(
  dir: DirectoryHandle,
  name: string,
  child: DirectoryHandle,
  isParent: boolean,
): Promise<void> {
  const [opened, listed] = [await child.stat(), await dir.lstat(name)];
  const foreign = isParent ? await holdsForeignEntry(child) : !(await hasNoEntries(child));
  if (listed !== undefined && sameIdentity(opened, listed) && !foreign) return;
  throw new SafeFsError({
    kind: 'ownership',
    path: dir.pathOf(name),
    operation: 'mkdir',
    detail: 'was replaced by another directory right after it was created; refusing to touch it',
  });
}

/**
 * Whether `dir` holds an entry no concurrent provision of this package can have made, read in
 * batches up to the first one: a directory swapped in may be as wide as its owner made it.
 */
async function holdsForeignEntry(dir: DirectoryHandle): Promise<boolean> {
  for await (const names of batchesOf(dir)) {
    for (const entry of names) if (!(await isReservedNameOrVolume(dir, entry))) return true;
  }
  return false;
}

/** Whether `entry` in `dir` is something a concurrent provision of this package may have made. */
async function isReservedNameOrVolume(dir: DirectoryHandle, entry: EntryName): Promise<boolean> {
  if (typeof entry !== 'string') return false;
  if (isReservedName(entry) || (await dir.lstat(recordName(entry))) !== undefined) return true;
  const inner = await dir.openDirectory(entry).catch(() => undefined);
  if (inner === undefined) return false;
  try {
    const isReserved = (name: EntryName) => typeof name === 'string' && isReservedName(name);
    return (await hasNoEntries(inner)) || (await findEntry(inner, isReserved)) !== undefined;
  } finally {
    await inner.close();
  }
}

/** The record of `leaf` and whether `leaf` exists, read in an order that makes them consistent. */
interface LeafState {
  /** `unread` when `leaf` is absent and the record was not read (see {@link claimLeaf}). */
  readonly record: OwnershipRecord | undefined | 'unread';
  readonly exists: boolean;
}

/**
 * A create publishes the record before `mkdir`, a delete removes the directory before the record,
 * so reading the directory first and the record second never sees a directory of this package
 * without its record, whatever runs concurrently (both reads go through the held parent handle).
 * With `readAbsentRecord` false the record of an absent directory is left unread.
 */
async function readLeafState(
  dir: DirectoryHandle,
  leaf: string,
  readAbsentRecord: boolean,
): Promise<LeafState> {
  const stats = await dir.lstat(leaf);
  if (stats !== undefined && !stats.isDirectory()) throw nonDirectoryError(dir.pathOf(leaf), stats);
  if (stats === undefined && !readAbsentRecord) return { record: 'unread', exists: false };
  const record = await readOwnershipRecord(dir, leaf);
  return { record, exists: stats !== undefined };
}

async function claimLeaf(
  context: VolumeContext,
  dir: DirectoryHandle,
  leaf: string,
  options: CreateVolumeOptions,
  undo: Undo,
): Promise<CreateVolumeOutcome> {
  const { owner } = options;
  for (let attempt = 1; ; attempt++) {
    // Without a directory the first attempt publishes unread: the no-replace publish fails on any
    // record already there, and the next attempt reads it. Over NFS this saves an OPEN per create.
    const { record, exists } = await readLeafState(dir, leaf, attempt > 1);
    if (record !== 'unread') {
      if (record?.claimUid === owner.claimUid) return completeOwn(dir, leaf, exists, options, undo);
      if (record !== undefined || exists) return adopt(context, dir, leaf, record, exists, options, undo);
    }
    try {
      await writeOwnershipRecord(dir, leaf, newRecord(context, owner), false);
    } catch (err) {
      // A record was there, or a concurrent provision published first: read again, and that record
      // decides (the same claim completes quietly; another claim's is refused as such).
      if (errnoCode(err) === 'EEXIST' && attempt < maxClaimAttempts) continue;
      throw err;
    }
    const dropRecord = () => dir.unlink(recordName(leaf));
    undo.push(dropRecord);
    try {
      await makeLeaf(dir, leaf, options, undo);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      // Another claim's parent won the mkdir: refused, and the undo takes this record away.
      await refuseParentNamed(dir, leaf);
      // A concurrent provision of the same claim read this record and made the directory first:
      // the record is that volume's now, so a later failure here must not take it away.
      undo.splice(undo.indexOf(dropRecord), 1);
      return completeOwn(dir, leaf, true, options, undo);
    }
    return 'created';
  }
}

/** {@link refuseParentAsVolume} for directory `leaf` of `dir`. */
async function refuseParentNamed(dir: DirectoryHandle, leaf: string): Promise<void> {
  const existing = await dir.openDirectory(leaf);
  if (existing === undefined) throw ownershipError(dir.pathOf(leaf), 'vanished while being made');
  try {
    await refuseParentAsVolume(existing);
  } finally {
    await existing.close();
  }
}

/**
 * Finishes the volume of a record naming this claim: left by a crashed attempt, or being made by a
 * concurrent provision of the same claim, whose `mkdir` may win ours.
 */
async function completeOwn(
  dir: DirectoryHandle,
  leaf: string,
  exists: boolean,
  options: CreateVolumeOptions,
  undo: Undo,
): Promise<CreateVolumeOutcome> {
  if (!exists) {
    try {
      await makeLeaf(dir, leaf, options, undo);
      return 'created';
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
  const volume = await dir.openDirectory(leaf);
  if (volume === undefined) throw ownershipError(dir.pathOf(leaf), 'vanished while being reused');
  try {
    // The directory may be another claim's parent that won the mkdir, not this claim's volume.
    await refuseParentAsVolume(volume);
    await volume.setAttributes(options.mode, options.uid, options.gid);
  } finally {
    await volume.close();
  }
  return 'reused';
}

async function adopt(
  context: VolumeContext,
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord | undefined,
  exists: boolean,
  options: CreateVolumeOptions,
  undo: Undo,
): Promise<CreateVolumeOutcome> {
  await checkAdoption(dir, leaf, record, options);
  if (!exists) await makeLeaf(dir, leaf, options, undo);
  const replacement = newRecord(context, options.owner);
  if (record?.releasedAt !== undefined && record.pvName !== options.owner.pvName) {
    await replaceReleased(dir, leaf, replacement);
    return 'adopted';
  }
  try {
    // Unrecorded data: a record published meanwhile by another claim must win, not be replaced.
    await writeOwnershipRecord(dir, leaf, replacement, record !== undefined);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    // A concurrent adoption by the same claim (another replica) ends the same way as this one.
    if ((await readOwnershipRecord(dir, leaf))?.claimUid === options.owner.claimUid) return 'adopted';
    throw ownershipError(dir.pathOf(leaf), 'was claimed concurrently by another claim');
  }
  return 'adopted';
}

async function makeLeaf(
  dir: DirectoryHandle,
  leaf: string,
  options: CreateVolumeOptions,
  undo: Undo,
): Promise<void> {
  const volume = await makeDirectory(dir, leaf, options.mode, options, undo, false);
  await volume.close();
}
