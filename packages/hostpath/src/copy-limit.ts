/**
 * An enforced clone's copy held to its project's hard limit by the provisioner itself, not only by
 * the kernel: ext4 lets a process with `CAP_SYS_RESOURCE` (a provisioner running as root in a
 * privileged container) write past a project's limit. The project's usage, as quota accounting
 * holds it, is read once the copied bytes pass the limit (safe-fs reports them after each chunk of
 * file data: the data written, holes left out) and once more when the copy ends; a copy found above
 * the limit fails with the error the kernel's refusal gets. What the failed copy wrote is the clone
 * jobs' to remove, with the limit.
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
 * Runs `copy` and refuses it once project `limit.projectId` uses more than `limit.hardBytes`
 * (read with `projectBytes`): the copy is stopped at its next entry after a progress report shows
 * more bytes copied than the limit and the accounting agrees, and checked once more when it ends.
 *
 * @throws the error of {@link copyDoesNotFit} when the copy ends above the limit or was stopped;
 * what `copy` or the last usage reading throws.
 */
export async function copyWithinLimit(
  copy: (options: LimitedCopyOptions) => Promise<CloneProgress>,
  limit: CopyLimit,
  projectBytes: (signal: AbortSignal) => Promise<number>,
  options: LimitedCopyOptions,
): Promise<CloneProgress> {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const checkUsage = async (readSignal: AbortSignal): Promise<void> => {
    if ((await projectBytes(readSignal)) > limit.hardBytes) throw copyDoesNotFit(limit.hardBytes);
  };
  let checking = false;
  const onProgress = (progress: CloneProgress): void => {
    options.onProgress(progress);
    if (progress.bytes <= limit.hardBytes || checking || stop.signal.aborted) return;
    checking = true;
    checkUsage(signal).then(
      () => {
        checking = false;
      },
      (err: unknown) => {
        // A failed reading only delays the verdict: the reading after the copy fails the clone.
        if (err instanceof InfeasibleError) stop.abort(err);
        else checking = false;
      },
    );
  };
  try {
    const progress = await copy({ signal, onProgress });
    await checkUsage(options.signal);
    return progress;
  } catch (err) {
    throw stop.signal.aborted ? stop.signal.reason : err;
  }
}
