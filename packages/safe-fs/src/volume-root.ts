/**
 * Volume directories under one base directory: create, delete, archive and inspect them without
 * leaving the base or following a symlink anywhere below it. See the package README for the
 * guarantees and their limits; each operation lives in its own module.
 */

import { normalizeBasePath } from './base-path.ts';
import { type CloneVolumeOptions, cloneVolume, removeCloneLeftover } from './clone-volume.ts';
import type { CopyProgress } from './copy-tree.ts';
import { type CreateVolumeOptions, type CreateVolumeOutcome, createVolume } from './create-volume.ts';
import type { DirectoryHandle } from './directory-handle.ts';
import {
  type ExpiredArchivesOptions,
  type ExpiredArchivesReport,
  removeExpiredArchives,
} from './expired-archives.ts';
import { type FsOps, nodeFsOps } from './fs-ops.ts';
import { type OwnershipRecord, readOwnershipRecord } from './ownership-record.ts';
import { withParents } from './parent-chain.ts';
import { findRecordedVolumes, type RecordedVolume } from './recorded-volume-search.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import {
  type ArchiveVolumeOptions,
  type ArchiveVolumeResult,
  archiveVolume,
  type DeleteVolumeOptions,
  type DeleteVolumeOutcome,
  deleteVolume,
  type ReleaseVolumeOutcome,
  type RemoveVolumeOptions,
  releaseVolume,
} from './remove-volume.ts';
import { sweepTree } from './sweep-tree.ts';
import { type TakeBackOptions, type TakeBackResult, takeBackVolume } from './take-back.ts';
import { defaultTemporaryFileGraceMs, type SweepReport, sweepTemporaryFiles } from './temporary-files.ts';
import type { VolumeContext } from './volume-context.ts';

export type { CloneVolumeOptions } from './clone-volume.ts';
export type { CopyProgress, CopyTreeOptions, SpecialFilePolicy } from './copy-tree.ts';
export type { CreateVolumeOptions, CreateVolumeOutcome } from './create-volume.ts';
export type { ExpiredArchivesOptions, ExpiredArchivesReport } from './expired-archives.ts';
export type {
  ArchiveVolumeOptions,
  ArchiveVolumeResult,
  DeleteVolumeOptions,
  DeleteVolumeOutcome,
  ReleaseVolumeOutcome,
  RemoveVolumeOptions,
} from './remove-volume.ts';
export type { TakeBackOptions, TakeBackOutcome, TakeBackResult } from './take-back.ts';
export type { SweepReport } from './temporary-files.ts';

/** Injection points of a {@link VolumeRoot}. */
export interface VolumeRootOptions {
  /** System calls; defaults to {@link nodeFsOps}. */
  readonly fs?: FsOps | undefined;
  /** Clock for record times and temporary-file ages, in epoch milliseconds; defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
  /**
   * Age after which a temporary record file left by a crash is removed; default 60 s. Each
   * directory is swept at most once per this period.
   */
  readonly temporaryFileGraceMs?: number | undefined;
}

/** A base directory holding volume directories. Cheap to construct; every call opens what it needs. */
export class VolumeRoot {
  /** The normalised absolute base path. */
  readonly base: string;
  readonly #context: VolumeContext;
  readonly #graceMs: number;
  // When each directory (by base-relative path) was last swept, to sweep each once per grace period.
  readonly #sweptAt = new Map<string, number>();
  #startupSweep: Promise<unknown> | undefined;

  /** @throws {@link SafeFsError} `invalid-path` when `base` is not absolute. */
  constructor(base: string, options: VolumeRootOptions = {}) {
    this.base = normalizeBasePath(base);
    const fs = options.fs ?? nodeFsOps;
    const now = options.now ?? Date.now;
    this.#graceMs = options.temporaryFileGraceMs ?? defaultTemporaryFileGraceMs;
    this.#context = { fs, base: this.base, now, touch: (dir) => this.#touch(dir) };
  }

  /**
   * Creates volume directory `path` and its missing parents (parents `0o755` unless
   * {@link CreateVolumeOptions.parentMode} says otherwise), each with owner and mode applied through
   * its own descriptor, and records `owner` beside it. Existing directories are only reused for the
   * same claim UID, or adopted on request (see {@link CreateVolumeOptions.adopt}); a concurrent
   * provision of the same claim ends in `reused`, never in a refusal. On failure everything this call
   * created is removed again.
   *
   * @throws {@link SafeFsError}: `symlink` or `not-a-directory` for a planted component, `ownership`
   * when the directory (or a parent) belongs to someone else, `permission`/`io` for system errors.
   */
  createVolume(path: RelativeVolumePath, options: CreateVolumeOptions): Promise<CreateVolumeOutcome> {
    return createVolume(this.#context, path, options);
  }

  /**
   * Deletes volume directory `path` recursively without following any link in it, then its record,
   * then the parents this package created that are now empty (never the base).
   *
   * @throws {@link SafeFsError}: `ownership` when the record names another PV, when a parent is a
   * volume itself, or when the recorded directory was moved away; `symlink` or `not-a-directory`
   * when a component is not a real directory; nothing is touched then.
   */
  deleteVolume(path: RelativeVolumePath, options: DeleteVolumeOptions): Promise<DeleteVolumeOutcome> {
    return deleteVolume(this.#context, path, options);
  }

  /**
   * Renames volume directory `path` to an unused archive name in the same parent, moving its record
   * along. An existing entry is never replaced.
   *
   * @throws {@link SafeFsError} as {@link VolumeRoot.deleteVolume}.
   */
  archiveVolume(path: RelativeVolumePath, options: ArchiveVolumeOptions): Promise<ArchiveVolumeResult> {
    return archiveVolume(this.#context, path, options);
  }

  /**
   * Removes every archive whose record's `expiresAt` has passed (see
   * {@link ArchiveVolumeOptions.retentionMs}), each like {@link VolumeRoot.deleteVolume}: the record
   * must name the archived PV, links are never followed, an archive holding another volume's record
   * or parent marker is refused, and an interrupted removal is finished by the next sweep. Archives
   * without a record are never touched; volumes are never entered.
   *
   * @throws whatever `options.beforeEachWrite` throws (a lost leadership term ends the sweep); any
   * other failure of one archive is reported in {@link ExpiredArchivesReport.failed}.
   */
  removeExpiredArchives(options: ExpiredArchivesOptions = {}): Promise<ExpiredArchivesReport> {
    return removeExpiredArchives(this.#context, options);
  }

  /**
   * The volumes recorded below the base whose record passes `wanted` (default: all), live, retained
   * or archived, each with its record; its directory may be gone (moved away, or being made). Only
   * records are read: volumes are never entered, and other directories only when this package made
   * them as parents or while their depth is below `maxDepth` (default 0).
   */
  recordedVolumes(
    wanted: (record: OwnershipRecord) => boolean = () => true,
    maxDepth = 0,
  ): Promise<RecordedVolume[]> {
    return findRecordedVolumes(this.#context, wanted, maxDepth);
  }

  /**
   * Creates volume `path` for `options.owner` with the data of an archived or retained volume of PV
   * `options.fromPvName`, found by its record anywhere below the base: the old directory is renamed
   * into place (no copy) and its record rewritten to the claim, in steps an interrupted call's retry
   * finishes (see `take-back.ts`). Only data of the claim's namespace is taken, unless
   * {@link TakeBackOptions.fromNamespaces} says otherwise; a second claim asking for the same data
   * is refused.
   *
   * @throws {@link SafeFsError}: `ownership` when the data is not found, still in use, of another
   * namespace, about to expire or already taken; as {@link VolumeRoot.createVolume} otherwise.
   */
  takeBackVolume(path: RelativeVolumePath, options: TakeBackOptions): Promise<TakeBackResult> {
    return takeBackVolume(this.#context, path, options);
  }

  /**
   * Creates volume `path` for `options.owner` holding a copy of the live volume `source` of PV
   * `options.sourcePvName` (a clone): copied into a reserved temporary directory without following
   * any link (modes, owners and hard links kept; FIFOs, sockets and devices skipped or refused as
   * `options.specialFiles` says), which becomes the volume only once complete. A call after a kill
   * or failure removes the leftover and starts over; an aborted call removes its temporary directory
   * and leaves the empty volume, for the caller to delete.
   *
   * @throws {@link SafeFsError}: `ownership` when `source` is not that PV's live volume or `path`
   * is not free for the claim; `io`/`permission` when an entry cannot be copied.
   */
  cloneVolume(
    source: RelativeVolumePath,
    path: RelativeVolumePath,
    options: CloneVolumeOptions,
  ): Promise<CopyProgress> {
    return cloneVolume(this.#context, source, path, options);
  }

  /**
   * Removes what a clone into volume `path` killed mid-copy left beside it (its reserved temporary
   * directory), when the volume's record names `options.pvName`: a volume given up after such a kill
   * (a deleted snapshot, say) leaves nothing behind. The volume stays; returns whether there was a leftover.
   *
   * @throws {@link SafeFsError}: `ownership` when the record names another PV; as
   * {@link VolumeRoot.deleteVolume} for the parents.
   */
  removeCloneLeftover(path: RelativeVolumePath, options: RemoveVolumeOptions): Promise<boolean> {
    return removeCloneLeftover(this.#context, path, options);
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
    return releaseVolume(this.#context, path, options);
  }

  /**
   * The ownership record of volume `path`; `undefined` when it or one of its parents is absent.
   * Only reads: no temporary files are swept, so read-only tools (the audit) can use it.
   */
  readRecord(path: RelativeVolumePath): Promise<OwnershipRecord | undefined> {
    return withParents(
      this.#context,
      path,
      { ifMissing: undefined, refuseNested: false, readOnly: true },
      ({ dir, leaf }) => readOwnershipRecord(dir, leaf),
    );
  }

  /**
   * Removes temporary record files left by crashed writers (older than the grace period) in the base
   * and in every directory of this package that holds volumes, never looking inside a volume. Runs
   * once by itself before a root's first operation; every operation also sweeps the directory it
   * works in. Returns what was removed and what was kept (young, or being written).
   */
  sweepTemporaryFiles(): Promise<SweepReport> {
    return sweepTree(this.#context, this.#graceMs);
  }

  async #touch(dir: DirectoryHandle): Promise<void> {
    this.#startupSweep ??= this.sweepTemporaryFiles().catch(() => undefined);
    await this.#startupSweep;
    const now = this.#context.now();
    const last = this.#sweptAt.get(dir.path);
    if (last !== undefined && now - last < this.#graceMs) return;
    this.#sweptAt.set(dir.path, now);
    // Best effort: a directory that cannot be swept now is swept on a later touch, and the
    // operation itself meets any real problem with the directory on its own.
    await sweepTemporaryFiles(dir, now, this.#graceMs).catch(() => undefined);
  }
}
