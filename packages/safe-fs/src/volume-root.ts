/**
 * Volume directories under one base directory: create, delete, archive and inspect them without
 * leaving the base or following a symlink anywhere below it. See the package README for the
 * guarantees and their limits.
 */

import { constants } from 'node:fs';
import { archiveCandidate, maxArchiveAttempts } from './archive-name.ts';
import { normalizeBasePath } from './base-path.ts';
import { findBookkeeping } from './bookkeeping-search.ts';
import { type DirectoryHandle, isMissing, nonDirectoryError, openBase } from './directory-handle.ts';
import { errnoCode, SafeFsError } from './errors.ts';
import { type FsOps, nodeFsOps } from './fs-ops.ts';
import { adoptionLockName, maxLeafBytes, parentMarkerName, volumeMarkerName } from './marker-names.ts';
import {
  type OwnershipRecord,
  readOwnershipRecord,
  type VolumeOwner,
  writeOwnershipRecord,
} from './ownership-record.ts';
import { parseRelativeVolumePath, type RelativeVolumePath } from './relative-volume-path.ts';
import { emptyDirectory } from './remove-tree.ts';

/** Injection points of a {@link VolumeRoot}. */
export interface VolumeRootOptions {
  /** System calls; defaults to {@link nodeFsOps}. */
  readonly fs?: FsOps | undefined;
  /** Clock for `createdAt` in ownership records, in epoch milliseconds; defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/** What {@link VolumeRoot.createVolume} applies and records. */
export interface CreateVolumeOptions {
  readonly owner: VolumeOwner;
  /** Permission bits (up to `0o7777`, so setgid works) set explicitly on every directory created. */
  readonly mode: number;
  /** Owner set on every directory created; unchanged when absent. */
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
  /**
   * Take over an existing directory not recorded for this claim: allowed only for unrecorded data
   * below the claim's namespace (the path's first segment) holding nothing of this package, for a
   * record the PV released ({@link VolumeRoot.releaseVolume}) that names the claim's namespace, or for
   * a record naming this very PV. Another claim's live volume is never taken over.
   */
  readonly adopt?: boolean | undefined;
}

/**
 * - `created`: this call made the volume directory.
 * - `reused`: it already existed with a record for the same claim UID (a retried provision); mode and
 *   owner were applied again.
 * - `adopted`: an existing directory was taken over under {@link CreateVolumeOptions.adopt}; its mode
 *   and owner were left as found.
 */
export type CreateVolumeOutcome = 'created' | 'reused' | 'adopted';

/** Identifies the PV on whose behalf a volume is deleted or archived. */
export interface RemoveVolumeOptions {
  /** A volume whose record names another PV is refused. */
  readonly pvName: string;
}

/** `missing`: there was no volume directory (any leftover record and empty parents were cleaned). */
export type DeleteVolumeOutcome = 'deleted' | 'missing';

/**
 * - `released`: the record names the PV and now says the volume was released (already did, on a
 *   retry); the data stays and a claim of the same namespace may adopt it.
 * - `unrecorded`: the directory has no record (an upstream provisioner's): nothing to mark.
 * - `other-owner`: the record names another PV (the data was adopted meanwhile): nothing touched.
 * - `missing`: there was no volume directory (any leftover record and empty parents were cleaned).
 */
export type ReleaseVolumeOutcome = 'released' | 'unrecorded' | 'other-owner' | 'missing';

/** Result of {@link VolumeRoot.archiveVolume}. */
export type ArchiveVolumeResult =
  | { readonly outcome: 'archived'; readonly archivedPath: RelativeVolumePath }
  | { readonly outcome: 'missing' };

interface SplitPath {
  readonly parents: readonly string[];
  readonly leaf: string;
}

function split(path: RelativeVolumePath): SplitPath {
  const segments = parseRelativeVolumePath(path).split('/');
  const leaf = segments.pop() ?? '';
  return { parents: segments, leaf };
}

function ownershipError(path: string, detail: string): SafeFsError {
  return new SafeFsError({ kind: 'ownership', path, operation: 'claim', detail });
}

function checkCreateOptions(options: CreateVolumeOptions): void {
  const { mode, uid, gid, owner } = options;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new RangeError(`invalid mode ${mode}`);
  for (const id of [uid, gid]) {
    if (id !== undefined && (!Number.isInteger(id) || id < 0)) throw new RangeError(`invalid uid/gid ${id}`);
  }
  if (owner.claimUid === '') throw new RangeError('owner.claimUid must not be empty');
}

async function closeAll(handles: readonly DirectoryHandle[]): Promise<void> {
  await Promise.all(handles.map((handle) => handle.close()));
}

/**
 * Removes `dir` (named `name` in `parent`) if this package created it as a parent and nothing but
 * that record is left in it. Returns whether it was removed; losing a race is not an error.
 */
async function removeCreatedParent(
  parent: DirectoryHandle,
  dir: DirectoryHandle,
  name: string,
): Promise<boolean> {
  const names = await dir.readdir();
  if (names.length !== 1 || names[0] !== parentMarkerName) return false;
  try {
    await dir.unlink(parentMarkerName);
    await parent.rmdir(name);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Opens existing parent directory `name`, refusing one that is a volume: a volume inside another
 * would be readable, writable and deletable by the other volume's workload.
 */
async function openExistingParent(dir: DirectoryHandle, name: string): Promise<DirectoryHandle | undefined> {
  const existing = await dir.openDirectory(name);
  if (existing !== undefined && (await dir.lstat(volumeMarkerName(name))) !== undefined) {
    await existing.close();
    throw ownershipError(dir.pathOf(name), 'is a volume itself; volumes cannot be nested');
  }
  return existing;
}

/** Removes now-empty parents this package created, deepest first, never the base (`chain[0]`). */
async function removeEmptyParents(
  chain: readonly DirectoryHandle[],
  parents: readonly string[],
): Promise<void> {
  for (let depth = parents.length; depth > 0; depth--) {
    const [parent, dir, name] = [chain[depth - 1], chain[depth], parents[depth - 1]];
    if (parent === undefined || dir === undefined || name === undefined) return;
    if (!(await removeCreatedParent(parent, dir, name))) return;
  }
}

/** A base directory holding volume directories. Cheap to construct; every call opens what it needs. */
export class VolumeRoot {
  /** The normalised absolute base path. */
  readonly base: string;
  readonly #fs: FsOps;
  readonly #now: () => number;

  /** @throws {@link SafeFsError} `invalid-path` when `base` is not absolute. */
  constructor(base: string, options: VolumeRootOptions = {}) {
    this.base = normalizeBasePath(base);
    this.#fs = options.fs ?? nodeFsOps;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Creates volume directory `path` and its missing parents, each with `mode`/`uid`/`gid` applied
   * through its own descriptor, and records `owner` beside it. Existing directories are only reused
   * for the same claim UID, or adopted on request (see {@link CreateVolumeOptions.adopt}). On failure
   * everything this call created is removed again.
   *
   * @throws {@link SafeFsError}: `symlink` or `not-a-directory` for a planted component, `ownership`
   * when the directory belongs to someone else, `permission`/`io` for system errors.
   */
  async createVolume(path: RelativeVolumePath, options: CreateVolumeOptions): Promise<CreateVolumeOutcome> {
    checkCreateOptions(options);
    const { parents, leaf } = split(path);
    if (Buffer.byteLength(leaf) > maxLeafBytes) {
      throw new SafeFsError({
        kind: 'invalid-path',
        path,
        operation: 'validate path',
        detail: `its last segment is longer than ${maxLeafBytes} bytes, leaving no room for the ownership record`,
      });
    }
    const chain: DirectoryHandle[] = [];
    const undo: Array<() => Promise<unknown>> = [];
    try {
      let dir = await openBase(this.#fs, this.base);
      chain.push(dir);
      for (const name of parents) {
        dir = await this.#openOrCreateParent(dir, name, options, undo);
        chain.push(dir);
      }
      return await this.#claimLeaf(dir, leaf, options, undo);
    } catch (err) {
      for (const step of undo.reverse()) await step().catch(() => undefined);
      throw err;
    } finally {
      await closeAll(chain);
    }
  }

  /**
   * Deletes volume directory `path` recursively without following any link in it, then its record,
   * then the parents this package created that are now empty (never the base).
   *
   * @throws {@link SafeFsError}: `ownership` when the record names another PV, `symlink` or
   * `not-a-directory` when a component is not a real directory; nothing is touched then.
   */
  deleteVolume(path: RelativeVolumePath, options: RemoveVolumeOptions): Promise<DeleteVolumeOutcome> {
    return this.#withParents(path, 'missing', async (chain, parents, dir, leaf) => {
      const record = await this.#recordFor(dir, leaf, options.pvName);
      const volume = await dir.openDirectory(leaf);
      if (volume !== undefined) {
        try {
          if (record === undefined) await refuseHostingVolumes(volume);
          await emptyDirectory(volume);
        } finally {
          await volume.close();
        }
        await dir.rmdir(leaf);
      }
      if (record !== undefined) await this.#dropRecord(dir, leaf);
      await removeEmptyParents(chain, parents);
      return volume === undefined ? 'missing' : 'deleted';
    });
  }

  /**
   * Renames volume directory `path` to an unused archive name in the same parent
   * (`archived-<leaf>`, plus `-<pv>` unless the leaf names the PV, plus a counter on collisions), moving its record along. An existing entry is never replaced: the
   * target is reserved with an exclusive `mkdir`, and `rename` only ever replaces that empty
   * placeholder.
   *
   * @throws {@link SafeFsError} as {@link VolumeRoot.deleteVolume}.
   */
  archiveVolume(path: RelativeVolumePath, options: RemoveVolumeOptions): Promise<ArchiveVolumeResult> {
    const missing: ArchiveVolumeResult = { outcome: 'missing' };
    return this.#withParents(path, missing, async (chain, parents, dir, leaf) => {
      const record = await this.#recordFor(dir, leaf, options.pvName);
      const stats = await dir.lstat(leaf);
      if (stats === undefined) {
        if (record !== undefined) await this.#dropRecord(dir, leaf);
        await removeEmptyParents(chain, parents);
        return missing;
      }
      if (!stats.isDirectory()) throw nonDirectoryError(dir.pathOf(leaf), stats);
      if (record === undefined) await this.#refuseUnrecordedHost(dir, leaf);
      for (let attempt = 1; attempt <= maxArchiveAttempts; attempt++) {
        const name = archiveCandidate(leaf, options.pvName, attempt);
        if (await this.#moveToUnused(dir, leaf, name, record !== undefined)) {
          return { outcome: 'archived', archivedPath: dir.pathOf(name) as RelativeVolumePath };
        }
      }
      throw new SafeFsError({
        kind: 'io',
        path: dir.pathOf(leaf),
        operation: 'archive',
        detail: `no free archive name after ${maxArchiveAttempts} attempts`,
      });
    });
  }

  /**
   * Keeps volume directory `path` and its data for a later claim (`onDelete: retain`): stamps
   * `releasedAt` on its record, after checking the record names `pvName`. Until then the record
   * blocks every other claim; afterwards a claim of the same namespace may adopt the directory.
   * Retaining never fails because someone else owns the directory: it only reports it.
   *
   * @throws {@link SafeFsError}: `symlink` or `not-a-directory` for a parent that is not a real
   * directory, `permission`/`io` for system errors.
   */
  releaseVolume(path: RelativeVolumePath, options: RemoveVolumeOptions): Promise<ReleaseVolumeOutcome> {
    return this.#withParents(path, 'missing', async (chain, parents, dir, leaf) => {
      const record = await readOwnershipRecord(dir, leaf);
      if (record !== undefined && record.pvName !== options.pvName) return 'other-owner';
      if ((await dir.lstat(leaf)) === undefined) {
        if (record !== undefined) await this.#dropRecord(dir, leaf);
        await removeEmptyParents(chain, parents);
        return 'missing';
      }
      if (record === undefined) return 'unrecorded';
      // A retry keeps the first time, which is when the data was let go.
      if (record.releasedAt === undefined) {
        const released = { ...record, releasedAt: this.#timestamp() };
        await writeOwnershipRecord(dir, volumeMarkerName(leaf), released, true);
      }
      return 'released';
    });
  }

  /** The ownership record of volume `path`; `undefined` when it or one of its parents is absent. */
  readOwner(path: RelativeVolumePath): Promise<OwnershipRecord | undefined> {
    return this.#withParents(path, undefined, (_chain, _parents, dir, leaf) =>
      readOwnershipRecord(dir, leaf),
    );
  }

  /**
   * Opens the base and every parent of `path` without creating anything, and runs `fn` with the chain
   * (base first) and the volume's own parent; returns `ifMissing` when a parent does not exist.
   */
  async #withParents<T>(
    path: RelativeVolumePath,
    ifMissing: T,
    fn: (
      chain: readonly DirectoryHandle[],
      parents: readonly string[],
      dir: DirectoryHandle,
      leaf: string,
    ) => Promise<T>,
  ): Promise<T> {
    const { parents, leaf } = split(path);
    const chain: DirectoryHandle[] = [];
    try {
      let dir = await openBase(this.#fs, this.base);
      chain.push(dir);
      for (const name of parents) {
        const next = await dir.openDirectory(name);
        if (next === undefined) return ifMissing;
        dir = next;
        chain.push(dir);
      }
      return await fn(chain, parents, dir, leaf);
    } finally {
      await closeAll(chain);
    }
  }

  async #openOrCreateParent(
    dir: DirectoryHandle,
    name: string,
    options: CreateVolumeOptions,
    undo: Array<() => Promise<unknown>>,
  ): Promise<DirectoryHandle> {
    const existing = await openExistingParent(dir, name);
    if (existing !== undefined) return existing;
    let child: DirectoryHandle;
    try {
      child = await this.#makeDirectory(dir, name, options, undo);
    } catch (err) {
      // Another provision created it between our open and mkdir: use theirs, it is not ours to mark.
      const raced = errnoCode(err) === 'EEXIST' ? await openExistingParent(dir, name) : undefined;
      if (raced === undefined) throw err;
      return raced;
    }
    undo.push(() => removeCreatedParent(dir, child, name));
    const marker = await child.openFile(
      parentMarkerName,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      0o600,
    );
    try {
      await marker.writeFile(
        `${JSON.stringify({ createdFor: options.owner.pvName, createdAt: this.#timestamp() })}\n`,
      );
    } finally {
      await marker.close();
    }
    return child;
  }

  /**
   * Makes directory `name` private first (0700), then sets owner and mode through its descriptor, so
   * neither the umask nor a window with wider permissions decides the result. The returned handle is
   * open; closing it is the caller's.
   */
  async #makeDirectory(
    dir: DirectoryHandle,
    name: string,
    options: CreateVolumeOptions,
    undo: Array<() => Promise<unknown>>,
  ): Promise<DirectoryHandle> {
    await dir.mkdir(name, 0o700);
    undo.push(() => dir.rmdir(name));
    const child = await dir.openDirectory(name);
    if (child === undefined) {
      throw new SafeFsError({
        kind: 'io',
        path: dir.pathOf(name),
        operation: 'open',
        detail: 'vanished after mkdir',
      });
    }
    try {
      await child.setAttributes(options.mode, options.uid, options.gid);
    } catch (err) {
      await child.close();
      throw err;
    }
    return child;
  }

  async #claimLeaf(
    dir: DirectoryHandle,
    leaf: string,
    options: CreateVolumeOptions,
    undo: Array<() => Promise<unknown>>,
  ): Promise<CreateVolumeOutcome> {
    const { owner } = options;
    const record = await readOwnershipRecord(dir, leaf);
    const stats = await dir.lstat(leaf);
    if (stats !== undefined && !stats.isDirectory()) throw nonDirectoryError(dir.pathOf(leaf), stats);
    if (record?.claimUid === owner.claimUid) {
      if (stats === undefined) {
        await this.#makeLeaf(dir, leaf, options, undo);
        return 'created';
      }
      const volume = await dir.openDirectory(leaf);
      if (volume === undefined) throw ownershipError(dir.pathOf(leaf), 'vanished while being reused');
      try {
        await volume.setAttributes(options.mode, options.uid, options.gid);
      } finally {
        await volume.close();
      }
      return 'reused';
    }
    if (record !== undefined || stats !== undefined) {
      await checkAdoption(dir, leaf, record, options);
      if (stats === undefined) await this.#makeLeaf(dir, leaf, options, undo);
      if (record?.releasedAt !== undefined && record.pvName !== owner.pvName) {
        await this.#replaceReleased(dir, leaf, owner);
      } else {
        // Unrecorded data: a record published meanwhile by another claim must win, not be replaced.
        await this.#publishRecord(dir, leaf, owner, record !== undefined);
      }
      return 'adopted';
    }
    await this.#publishRecord(dir, leaf, owner, false);
    undo.push(() => dir.unlink(volumeMarkerName(leaf)));
    await this.#makeLeaf(dir, leaf, options, undo);
    return 'created';
  }

  async #publishRecord(
    dir: DirectoryHandle,
    leaf: string,
    owner: VolumeOwner,
    replace: boolean,
  ): Promise<void> {
    try {
      await writeOwnershipRecord(dir, volumeMarkerName(leaf), this.#record(owner), replace);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      throw ownershipError(dir.pathOf(leaf), 'is being created concurrently for another claim');
    }
  }

  /**
   * Replaces the released record of `leaf` with `owner`'s. Two claims may try at once, so the new
   * record is first published exclusively as the adoption lock, and only the lock's holder checks the
   * record again and renames the lock over it: the record never goes missing, and no claim's new
   * record is replaced by another's. A lock naming this claim was left by its own interrupted attempt.
   */
  async #replaceReleased(dir: DirectoryHandle, leaf: string, owner: VolumeOwner): Promise<void> {
    const path = dir.pathOf(leaf);
    const lock = adoptionLockName(leaf);
    try {
      await writeOwnershipRecord(dir, lock, this.#record(owner), false);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      if ((await readOwnershipRecord(dir, leaf, lock))?.claimUid !== owner.claimUid) {
        throw ownershipError(path, 'is being adopted concurrently by another claim');
      }
    }
    try {
      const current = await readOwnershipRecord(dir, leaf);
      if (current?.releasedAt === undefined || current.namespace !== owner.namespace) {
        throw ownershipError(path, 'changed owner while being adopted');
      }
      await dir.rename(lock, volumeMarkerName(leaf));
    } catch (err) {
      await dir.unlink(lock).catch(() => undefined);
      throw err;
    }
  }

  async #makeLeaf(
    dir: DirectoryHandle,
    leaf: string,
    options: CreateVolumeOptions,
    undo: Array<() => Promise<unknown>>,
  ): Promise<void> {
    const volume = await this.#makeDirectory(dir, leaf, options, undo);
    await volume.close();
  }

  /** The record of `leaf`, after checking it does not name a PV other than `pvName`. */
  async #recordFor(dir: DirectoryHandle, leaf: string, pvName: string): Promise<OwnershipRecord | undefined> {
    const record = await readOwnershipRecord(dir, leaf);
    if (record !== undefined && record.pvName !== pvName) {
      throw ownershipError(
        dir.pathOf(leaf),
        `is recorded for another PV, not ${pvName}; refusing to touch it`,
      );
    }
    return record;
  }

  async #refuseUnrecordedHost(dir: DirectoryHandle, leaf: string): Promise<void> {
    const volume = await dir.openDirectory(leaf);
    if (volume === undefined) return;
    try {
      await refuseHostingVolumes(volume);
    } finally {
      await volume.close();
    }
  }

  async #dropRecord(dir: DirectoryHandle, leaf: string): Promise<void> {
    try {
      await dir.unlink(volumeMarkerName(leaf));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  /**
   * Moves `leaf` (and its record, when `withRecord`) to `name` in the same directory unless `name` is
   * taken; returns whether it moved.
   */
  async #moveToUnused(
    dir: DirectoryHandle,
    leaf: string,
    name: string,
    withRecord: boolean,
  ): Promise<boolean> {
    try {
      await dir.mkdir(name, 0o700);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return false;
      throw err;
    }
    const undo: Array<() => Promise<unknown>> = [() => dir.rmdir(name)];
    try {
      if (withRecord) {
        try {
          await dir.link(volumeMarkerName(leaf), volumeMarkerName(name));
        } catch (err) {
          if (errnoCode(err) === 'EEXIST') return false;
          throw err;
        }
        undo.push(() => dir.unlink(volumeMarkerName(name)));
      }
      await dir.rename(leaf, name);
      undo.length = 0;
    } finally {
      for (const step of undo.reverse()) await step().catch(() => undefined);
    }
    if (withRecord) await this.#dropRecord(dir, leaf);
    return true;
  }

  #timestamp(): string {
    return new Date(this.#now()).toISOString();
  }

  #record(owner: VolumeOwner): OwnershipRecord {
    return { ...owner, createdAt: this.#timestamp() };
  }
}

/**
 * Refuses an unrecorded directory (an upstream provisioner's) that holds volumes or parents of this
 * package: removing or moving it would take their data along.
 */
async function refuseHostingVolumes(volume: DirectoryHandle): Promise<void> {
  const found = await findBookkeeping(volume);
  if (found !== undefined) {
    throw ownershipError(
      volume.path,
      `has no ownership record but holds volumes of this provisioner (found ${JSON.stringify(found)}); refusing to touch it`,
    );
  }
}

/**
 * Refuses to take over `leaf` unless adoption was asked for and the data is the claim's own (R7).
 * A live record belongs to one volume: only a record naming this very PV (left by an earlier
 * attempt) is taken over, since adopting another claim's live volume would leave two PVs on one
 * directory. A released record (its PV kept the data and is gone) is taken over when it names the
 * claim's namespace. Unrecorded data must lie below the claim's namespace (the first path segment)
 * and hold nothing of this package: a parent marker or a record anywhere inside means other volumes
 * live there, and their data and records would be handed to this claim's workload. Messages never
 * name the other claim: they end up in an event the requesting tenant can read.
 */
async function checkAdoption(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord | undefined,
  options: CreateVolumeOptions,
): Promise<void> {
  const path = dir.pathOf(leaf);
  const found =
    record === undefined ? 'already exists without an ownership record' : 'belongs to another claim';
  if (options.adopt !== true) throw ownershipError(path, `${found}; refusing to reuse it`);
  const { namespace, pvName } = options.owner;
  const sameNamespace =
    record === undefined
      ? path.includes('/') && path.split('/')[0] === namespace
      : record.namespace === namespace;
  if (!sameNamespace) {
    throw ownershipError(
      path,
      `${found}; adoption is limited to data of namespace ${JSON.stringify(namespace)}`,
    );
  }
  if (record !== undefined) {
    if (record.pvName !== pvName && record.releasedAt === undefined) {
      throw ownershipError(
        path,
        `${found}, which still uses it; only released or unrecorded data can be adopted`,
      );
    }
    return;
  }
  const volume = await dir.openDirectory(leaf);
  if (volume === undefined) throw ownershipError(path, 'vanished while being adopted');
  try {
    if ((await findBookkeeping(volume)) !== undefined) {
      throw ownershipError(path, 'holds volumes or bookkeeping of this provisioner; refusing to adopt it');
    }
  } finally {
    await volume.close();
  }
}
