/**
 * Cloning a volume: the new volume is created as any other (record, then an empty directory), the
 * source's tree is copied into a reserved temporary directory beside it, and that directory is
 * renamed over the empty volume only once complete. A kill leaves the empty volume and a temporary
 * directory no one takes for a volume; the retry removes the leftover and copies again. A kill after
 * the rename leaves the complete copy: the retry finds the volume holding data and keeps it.
 */

import { join } from 'node:path';
import { ownershipError } from './adoption.ts';
import { type CopyProgress, type CopyTreeOptions, copyTree } from './copy-tree.ts';
import { type CreateVolumeOptions, createVolume } from './create-volume.ts';
import { type DirectoryHandle, isMissing, nonDirectoryError } from './directory-handle.ts';
import { hasNoEntries } from './directory-listing.ts';
import { errnoCode } from './errors.ts';
import { readOwnershipRecord } from './ownership-record.ts';
import { type ParentChain, withParents } from './parent-chain.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { emptyDirectory } from './remove-tree.ts';
import type { RemoveVolumeOptions } from './remove-volume.ts';
import { cloneTemporaryName } from './reserved-names.ts';
import { measureDirectory } from './usage-scan.ts';
import type { VolumeContext } from './volume-context.ts';
import { refuseParentAsVolume } from './volume-like.ts';
import { guardedContext } from './write-guard.ts';

/** A new volume, created with a copy of the live volume of PV `sourcePvName`. */
export interface CloneVolumeOptions
  extends Omit<CreateVolumeOptions, 'adopt' | 'namespaceScopedPath' | 'adoptAmbiguousNamespacePrefix'>,
    Omit<CopyTreeOptions, 'beforeEachWrite'> {
  /** The source volume's PV: its record must name it. */
  readonly sourcePvName: string;
  /**
   * Awaited once per copy with the absolute path of the temporary directory, made and still empty,
   * before anything is copied into it: the caller prepares what the copy must land in (a quota
   * project, say). Not called when an earlier run's complete copy is kept. When it throws, the
   * temporary directory is removed and the clone fails with its error. It must fence its own writes.
   */
  readonly beforeCopy?: ((directory: string) => Promise<void>) | undefined;
}

/** Runs `fn` in the parent of `path`; a missing parent means the volume is gone. */
async function inParent<T>(
  context: VolumeContext,
  path: RelativeVolumePath,
  fn: (parents: ParentChain) => Promise<T>,
): Promise<T> {
  const missing = Symbol('missing');
  const result = await withParents<T | typeof missing>(
    context,
    path,
    { ifMissing: missing, refuseNested: true },
    fn,
  );
  if (result === missing) throw ownershipError(path, 'does not exist');
  return result;
}

/** Removes the reserved temporary directory `name` of `dir` with all it holds, if it is there. */
async function removeLeftover(dir: DirectoryHandle, name: string): Promise<void> {
  const stats = await dir.lstat(name);
  if (stats === undefined) return;
  if (!stats.isDirectory()) throw nonDirectoryError(dir.pathOf(name), stats);
  const leftover = await dir.openDirectory(name);
  if (leftover !== undefined) {
    try {
      await emptyDirectory(leftover);
    } finally {
      await leftover.close();
    }
  }
  await dir.rmdir(name).catch((err: unknown) => {
    if (!isMissing(err)) throw err;
  });
}

/**
 * What the volume `leaf` of `dir` holds, when it holds anything: then it is an earlier run's complete
 * copy, since the copy arrives by one rename and nothing else writes into a volume before its PV exists.
 */
async function completedCopy(dir: DirectoryHandle, leaf: string): Promise<CopyProgress | undefined> {
  const volume = await dir.openDirectory(leaf);
  if (volume === undefined) throw ownershipError(dir.pathOf(leaf), 'is recorded, but its directory is gone');
  try {
    if (await hasNoEntries(volume)) return undefined;
    const usage = await measureDirectory(volume);
    // Special files skipped by that run are not known any more.
    return { entries: usage.inodes - 1, bytes: usage.bytes, skipped: 0 };
  } finally {
    await volume.close();
  }
}

/** Runs `fn` on the live volume `path` of PV `pvName`, refusing anything else. */
function withSourceVolume<T>(
  context: VolumeContext,
  path: RelativeVolumePath,
  pvName: string,
  fn: (volume: DirectoryHandle) => Promise<T>,
): Promise<T> {
  return inParent(context, path, async ({ dir, leaf }) => {
    const record = await readOwnershipRecord(dir, leaf);
    if (record?.pvName !== pvName || record.releasedAt !== undefined || record.archivedAt !== undefined) {
      throw ownershipError(path, `is not the volume of ${pvName}; refusing to copy it`);
    }
    const volume = await dir.openDirectory(leaf);
    if (volume === undefined) throw ownershipError(path, 'is recorded, but its directory is gone');
    try {
      await refuseParentAsVolume(volume);
      return await fn(volume);
    } finally {
      await volume.close();
    }
  });
}

/**
 * Creates volume `path` holding a copy of volume `source` (see `copy-tree.ts` for what is copied);
 * returns how much was copied. Run again after a kill or a failure, it starts over, unless the
 * earlier run got as far as putting its copy in place: then it returns what the volume holds.
 *
 * @throws {@link SafeFsError}: `ownership` when `source` is not the live volume of
 * `options.sourcePvName`, or `path` is not free for `options.owner`; what the copy throws.
 */
export async function cloneVolume(
  unguarded: VolumeContext,
  source: RelativeVolumePath,
  path: RelativeVolumePath,
  options: CloneVolumeOptions,
): Promise<CopyProgress> {
  if (source === path) throw new RangeError('a volume cannot be cloned into itself');
  const context = guardedContext(unguarded, options.beforeEachWrite);
  const outcome = await createVolume(context, path, options);
  return inParent(context, path, async ({ dir, leaf }) => {
    const earlier = outcome === 'reused' ? await completedCopy(dir, leaf) : undefined;
    if (earlier !== undefined) return earlier;
    const temporary = cloneTemporaryName(leaf);
    await removeLeftover(dir, temporary);
    await dir.mkdir(temporary, 0o700);
    try {
      await options.beforeCopy?.(join(context.base, dir.pathOf(temporary)));
      const into = await dir.openDirectory(temporary);
      if (into === undefined) throw ownershipError(dir.pathOf(temporary), 'vanished while being filled');
      let progress: CopyProgress;
      try {
        progress = await withSourceVolume(context, source, options.sourcePvName, (volume) =>
          copyTree(volume, into, options),
        );
      } finally {
        await into.close();
      }
      // Over the empty volume made above: rename(2) never replaces a directory that holds data.
      await dir.rename(temporary, leaf).catch((err: unknown) => {
        if (errnoCode(err) !== 'ENOTEMPTY' && errnoCode(err) !== 'EEXIST') throw err;
        throw ownershipError(dir.pathOf(leaf), 'already holds data; the copy is not put over it');
      });
      return progress;
    } catch (err) {
      await removeLeftover(dir, temporary).catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Removes the reserved temporary directory a killed clone into volume `path` left, when the
 * volume's record names PV `options.pvName`; the volume itself stays, for `deleteVolume`. Returns
 * whether there was one.
 *
 * @throws {@link SafeFsError}: `ownership` when the record names another PV.
 */
export async function removeCloneLeftover(
  unguarded: VolumeContext,
  path: RelativeVolumePath,
  options: Pick<RemoveVolumeOptions, 'pvName' | 'beforeEachWrite'>,
): Promise<boolean> {
  const context = guardedContext(unguarded, options.beforeEachWrite);
  return withParents(context, path, { ifMissing: false, refuseNested: true }, async ({ dir, leaf }) => {
    const temporary = cloneTemporaryName(leaf);
    if ((await dir.lstat(temporary)) === undefined) return false;
    const record = await readOwnershipRecord(dir, leaf);
    if (record?.pvName !== options.pvName) {
      throw ownershipError(
        dir.pathOf(temporary),
        `is not a copy into the volume of ${options.pvName}; refusing to remove it`,
      );
    }
    await removeLeftover(dir, temporary);
    return true;
  });
}
