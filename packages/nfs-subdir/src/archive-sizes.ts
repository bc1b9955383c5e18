/**
 * The sizes of the archives, for the retention sweep's byte metrics: each archive is walked with
 * safe-fs's usage scan under the usage monitor's I/O budget and scan timeout, once, when a sweep first
 * finds it (nothing writes to an archive: no PV points at it), and forgotten once a sweep no longer
 * finds it. A walk the timeout cuts off would be cut off again, so that archive is not walked again
 * and counts nothing; a walk that fails otherwise counts nothing and is tried again at the next sweep.
 */
import type { Logger } from '@kube-provisioner/controller/logging';
import type { UsageMonitor } from '@kube-provisioner/controller/usage';
import { type FsOps, type RelativeVolumePath, scanVolumeUsage } from '@kube-provisioner/safe-fs';

/** Where the walks get their I/O budget and timeout: the usage monitor's `scanOptions`. */
export type ArchiveScanBudget = Pick<UsageMonitor, 'scanOptions'>;

/** What is known of one archive: its bytes, or that it is too large to walk within the timeout. */
type ArchiveSize = number | 'too large';

/** Archive sizes in bytes by path, measured at most once each; see the module comment. */
export class ArchiveSizes {
  readonly #base: string;
  readonly #budget: ArchiveScanBudget;
  readonly #fs: FsOps | undefined;
  /** What was known at the start of the current sweep. */
  #known = new Map<string, ArchiveSize>();
  /** What is known of the archives the current sweep found. */
  #found = new Map<string, ArchiveSize>();

  /** Sizes the archives below `base` (the mount root) within `budget`, through `fs` (default: Node's). */
  constructor(base: string, budget: ArchiveScanBudget, fs?: FsOps) {
    this.#base = base;
    this.#budget = budget;
    this.#fs = fs;
  }

  /**
   * The bytes archive `path` holds, as `du` counts them; `undefined` when it could not be measured.
   *
   * @throws the reason of `signal` once it aborted (the leadership term ended).
   */
  async measure(path: RelativeVolumePath, signal: AbortSignal, logger: Logger): Promise<number | undefined> {
    const size = this.#known.get(path) ?? (await this.#scan(path, signal, logger));
    if (size !== undefined) this.#found.set(path, size);
    return typeof size === 'number' ? size : undefined;
  }

  /** Ends a sweep: the archives it did not find (removed, or gone) are forgotten. */
  endSweep(): void {
    this.#known = this.#found;
    this.#found = new Map();
  }

  async #scan(
    path: RelativeVolumePath,
    signal: AbortSignal,
    logger: Logger,
  ): Promise<ArchiveSize | undefined> {
    const scan = this.#budget.scanOptions(signal);
    try {
      return (await scanVolumeUsage(this.#base, path, { fs: this.#fs, ...scan }))?.bytes;
    } catch (err) {
      signal.throwIfAborted();
      if (scan.signal.aborted) {
        logger.warn(
          { path },
          'archive too large to measure within the scan timeout; its bytes are not counted',
        );
        return 'too large';
      }
      logger.warn({ path, err }, 'could not measure an archive; trying again at the next sweep');
      return undefined;
    }
  }
}
