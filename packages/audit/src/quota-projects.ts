/**
 * The quota project IDs of the file system an audited root is on, for the `project-without-volume`
 * finding: the mount is found as hostpath finds it (`/proc/self/mountinfo`, XFS or ext4 with
 * `prjquota`) and read with the same `xfs_quota report` hostpath measures usage with, so the two
 * never disagree on what a project is.
 */
import { readFile, realpath } from 'node:fs/promises';
import { checkQuotaMount, type RunXfsQuota, xfsQuota } from '@kube-provisioner/hostpath';

/** Options of {@link readQuotaProjects}; tests inject the mount table and `xfs_quota`. */
export interface QuotaProjectsOptions {
  /** Reads the text of `/proc/self/mountinfo`. */
  readonly readMountInfo?: (() => Promise<string>) | undefined;
  /** Runs `xfs_quota`; default the one on `PATH`. */
  readonly run?: RunXfsQuota | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The project IDs with usage or limits on the file system holding `root`, ascending.
 *
 * @throws Error saying why when the root's file system has no project quotas or `xfs_quota` fails
 * (missing, or run without the privilege to read every project).
 */
export async function readQuotaProjects(root: string, options: QuotaProjectsOptions = {}): Promise<number[]> {
  const readMountInfo = options.readMountInfo ?? (() => readFile('/proc/self/mountinfo', 'utf8'));
  const check = checkQuotaMount(await realpath(root), await readMountInfo());
  if (!check.enforced) throw new Error(`cannot read quota projects: ${check.reason}`);
  const quotas = xfsQuota(check.mount, options.run);
  const report = await quotas.report(options.signal ?? new AbortController().signal).catch((err: unknown) => {
    const missing = (err as { cause?: { code?: unknown } }).cause?.code === 'ENOENT';
    throw new Error(
      missing
        ? 'cannot read quota projects: xfs_quota is not installed (Debian: apt-get install xfsprogs)'
        : `cannot read quota projects: ${(err as Error).message}`,
      { cause: err },
    );
  });
  return [...report.keys()].sort((a, b) => a - b);
}
