/**
 * How much one volume directory holds, measured by walking it the way `du -x` would, but without
 * ever leaving it: no link is followed (every lookup is `lstat`, every directory is opened with
 * `O_NOFOLLOW` through its parent's descriptor), a directory on another file system (a mount inside
 * the volume) is not entered, and a file with several hard links is counted once. FIFOs, sockets and
 * devices are only `lstat`ed, never opened. Entries the walk may not read are counted, not fatal, so
 * a workload cannot hide data from the measure or stop it by making a directory unreadable.
 *
 * The walk reads each directory in batches and keeps an explicit stack of the levels it is in
 * (`open-levels.ts`): its memory does not grow with the width of a directory, at most
 * `maxOpenLevels` levels hold descriptors however deep the tree, and no step rescans the stack.
 * A level closed for depth is reopened through `..` of its child and checked to be the same
 * directory, as removal does, and skips the names it had read.
 */

import { normalizeBasePath } from './base-path.ts';
import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { errnoCode, isSafeFsError, SafeFsError } from './errors.ts';
import { type FsOps, nodeFsOps } from './fs-ops.ts';
import { OpenLevels } from './open-levels.ts';
import { withParents } from './parent-chain.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';

/** Options of {@link scanVolumeUsage}. */
export interface UsageScanOptions {
  /** System calls; defaults to {@link nodeFsOps}. */
  readonly fs?: FsOps | undefined;
  /** Stops the walk: it rejects with the signal's reason before its next system call. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The I/O budget: awaited before each system call the walk makes inside the volume (one batch of
   * a directory's names, one `lstat` or `open`), so a rate limiter here bounds the load a scan puts on the disk or
   * the export. Without it the walk runs at full speed.
   */
  readonly pace?: (() => Promise<void>) | undefined;
}

/** What a volume directory holds, as {@link scanVolumeUsage} measured it. */
export interface VolumeUsage {
  /**
   * Bytes allocated on disk (`st_blocks` × 512, summed over distinct inodes), as `du` and project
   * quotas count them: a sparse file counts what it allocates, not its apparent size.
   */
  readonly bytes: number;
  /** Distinct inodes, the volume directory itself included, as an inode quota counts them. */
  readonly inodes: number;
  /**
   * Entries the walk was refused (`EACCES`/`EPERM`): a directory it could not list or open, or an
   * entry it could not `lstat`. What lies below them is not counted.
   */
  readonly unreadable: number;
  /** Directories not entered because another file system is mounted there. */
  readonly otherFileSystems: number;
  /** System calls made inside the volume, each paced by {@link UsageScanOptions.pace}. */
  readonly operations: number;
}

const refusedCodes: ReadonlySet<string> = new Set(['EACCES', 'EPERM']);

function isRefused(err: unknown): boolean {
  return refusedCodes.has(errnoCode(err) ?? '');
}

/** Counts as the walk goes; one per scan. */
class Tally {
  bytes = 0;
  inodes = 0;
  unreadable = 0;
  otherFileSystems = 0;
  operations = 0;
  // Only inodes with several links are remembered: memory grows with hard links, not with files.
  readonly #linked = new Set<string>();
  readonly #signal: AbortSignal | undefined;
  readonly #pace: (() => Promise<void>) | undefined;

  constructor(options: UsageScanOptions) {
    this.#signal = options.signal;
    this.#pace = options.pace;
  }

  /** Waits for the budget, then counts one system call. */
  async step(): Promise<void> {
    this.#signal?.throwIfAborted();
    await this.#pace?.();
    this.#signal?.throwIfAborted();
    this.operations++;
  }

  /** Counts `stats` unless its inode was counted already (another hard link to it). */
  add(stats: { dev: number; ino: number; nlink: number; blocks: number; isDirectory(): boolean }): void {
    if (stats.nlink > 1 && !stats.isDirectory()) {
      const key = `${stats.dev}:${stats.ino}`;
      if (this.#linked.has(key)) return;
      this.#linked.add(key);
    }
    this.bytes += stats.blocks * 512;
    this.inodes++;
  }

  result(): VolumeUsage {
    const { bytes, inodes, unreadable, otherFileSystems, operations } = this;
    return { bytes, inodes, unreadable, otherFileSystems, operations };
  }
}

/**
 * Measures volume directory `path` under `base`; `undefined` when it (or a parent) does not exist.
 * Only reads. A directory swapped for a link during the walk is not followed; one moved away while
 * its descriptor was closed ends the walk with an error rather than measuring somewhere else.
 *
 * @throws {@link SafeFsError}: `symlink` or `not-a-directory` when the volume or a parent is not a
 * real directory, `io` when the tree moved during the walk or a system call failed otherwise; the
 * signal's reason when aborted.
 */
export function scanVolumeUsage(
  base: string,
  path: RelativeVolumePath,
  options: UsageScanOptions = {},
): Promise<VolumeUsage | undefined> {
  const context = {
    fs: options.fs ?? nodeFsOps,
    base: normalizeBasePath(base),
    now: Date.now,
    touch: async () => {},
  };
  return withParents(
    context,
    path,
    { ifMissing: undefined, refuseNested: false, readOnly: true },
    async (chain) => {
      const volume = await chain.dir.openDirectory(chain.leaf);
      if (volume === undefined) return undefined;
      try {
        return await walk(volume, new Tally(options));
      } finally {
        await volume.close();
      }
    },
  );
}

/** Measures the open directory `top` at full speed; only reads. */
export function measureDirectory(top: DirectoryHandle): Promise<VolumeUsage> {
  return walk(top, new Tally({}));
}

async function walk(top: DirectoryHandle, tally: Tally): Promise<VolumeUsage> {
  const topStats = await top.stat();
  tally.add(topStats);
  const levels = new OpenLevels(top, topStats, undefined, {
    relisting: 'resume',
    moved: { operation: 'measure usage', detail: 'was moved while being measured; will measure again' },
    beforeRead: () => tally.step(),
    listingRefused: (err) => {
      if (!isRefused(err)) return false;
      tally.unreadable++;
      return true;
    },
  });
  try {
    for (;;) {
      const name = await levels.nextName();
      if (name === undefined) {
        if (levels.depth === 0) break;
        await levels.leave();
        continue;
      }
      const child = await visit(levels.dir, name, topStats.dev, tally);
      if (child !== undefined) await levels.enter(child, name, undefined);
    }
  } finally {
    await levels.close();
  }
  return tally.result();
}

/** Counts entry `name` of `dir`; returns it opened when it is a directory to walk into. */
async function visit(
  dir: DirectoryHandle,
  name: EntryName,
  dev: number,
  tally: Tally,
): Promise<DirectoryHandle | undefined> {
  await tally.step();
  let stats: Awaited<ReturnType<DirectoryHandle['lstat']>>;
  try {
    stats = await dir.lstat(name);
  } catch (err) {
    if (!isRefused(err)) throw err;
    tally.unreadable++;
    return undefined;
  }
  if (stats === undefined) return undefined;
  if (stats.dev !== dev) {
    tally.otherFileSystems++;
    return undefined;
  }
  tally.add(stats);
  if (!stats.isDirectory()) return undefined;
  await tally.step();
  try {
    return await dir.openDirectory(name);
  } catch (err) {
    // Swapped for a link or a file since the lstat: counted as what it was, not followed.
    if (isSafeFsError(err) && (err.kind === 'symlink' || err.kind === 'not-a-directory')) return undefined;
    if (!isRefused(err)) throw err;
    tally.unreadable++;
    return undefined;
  }
}

/**
 * {@link scanVolumeUsage} for every volume under `base`, in the shape a usage monitor's `measure`
 * takes: each call scans the directory `volume.path`.
 */
export function volumeUsageScanner(
  base: string,
  fs?: FsOps,
): (
  volume: { readonly path: RelativeVolumePath },
  scan: Pick<UsageScanOptions, 'signal' | 'pace'>,
) => Promise<VolumeUsage | undefined> {
  return (volume, scan) => scanVolumeUsage(base, volume.path, { fs, ...scan });
}
