/**
 * An enforced clone's copy held to its project's hard limit by the provisioner itself, not only by
 * the kernel: ext4 lets a process with `CAP_SYS_RESOURCE` (a provisioner running as root in a
 * privileged container) write past a project's limit. safe-fs reports the file data written after
 * each chunk (holes left out), and every byte written takes a block of the project, so a copy that has
 * written more than the limit cannot fit: it is stopped within that chunk, without waiting for the
 * accounting. Directories, links and partly filled blocks are counted only by the accounting, read
 * once more when the copy ends; a copy found above the limit fails with the error the kernel's refusal
 * gets. What the failed copy wrote is the clone jobs' to remove, with the limit.
 */
import { InfeasibleError } from '@kube-provisioner/controller';
import type { CloneProgress } from '@kube-provisioner/controller/clone';

/** The project an enforced clone is copied into, and its hard limit. */
export interface CopyLimit {
  /** Recorded in the volume's record before the copy starts. */
  readonly projectId: number;
  readonly hardBytes: number;
}

/** What {@link copyWithinLimit} hands the copy: its own signal and progress callback. */
export interface LimitedCopyOptions {
  readonly signal: AbortSignal;
  readonly onProgress: (progress: CloneProgress) => void;
}

/** The refusal of a source whose data does not fit a new volume's hard limit of `hardBytes`. */
export function copyDoesNotFit(hardBytes: number, cause?: unknown): InfeasibleError {
  return new InfeasibleError(
    `the source's data does not fit the new volume's limit of ${hardBytes} bytes (the request plus "hardLimitGrace"), or the file system is full; the partial copy was removed: request at least what the source uses`,
    { cause },
  );
}

/**
 * Runs `copy` and refuses it once it has written more than `limit.hardBytes`, or when project
 * `limit.projectId` uses more than that once it ends (read with `projectBytes`).
 *
 * @throws the error of {@link copyDoesNotFit} when the copy wrote or ends above the limit; what
 * `copy` or the usage reading throws.
 */
export async function copyWithinLimit(
  copy: (options: LimitedCopyOptions) => Promise<CloneProgress>,
  limit: CopyLimit,
  projectBytes: (signal: AbortSignal) => Promise<number>,
  options: LimitedCopyOptions,
): Promise<CloneProgress> {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const onProgress = (progress: CloneProgress): void => {
    options.onProgress(progress);
    if (progress.bytes > limit.hardBytes && !stop.signal.aborted) stop.abort(copyDoesNotFit(limit.hardBytes));
  };
  try {
    const progress = await copy({ signal, onProgress });
    if (stop.signal.aborted) throw stop.signal.reason;
    if ((await projectBytes(options.signal)) > limit.hardBytes) throw copyDoesNotFit(limit.hardBytes);
    return progress;
  } catch (err) {
    throw stop.signal.aborted ? stop.signal.reason : err;
  }
}
