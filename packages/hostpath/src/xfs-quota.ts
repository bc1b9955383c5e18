/**
 * Project quotas set with `xfs_quota` (Debian's `xfsprogs`), which speaks both XFS and, in foreign
 * mode (`-f`), ext4's generic quota interface. One process run per operation; nothing is kept open.
 */
import { execFile } from 'node:child_process';
import type { QuotaMount } from './quota-mount.ts';

/** Block and inode use of one project, as quota accounting holds it. */
export interface ProjectUsage {
  readonly bytes: number;
  readonly inodes: number;
}

/** Block and inode limits of one project; 0 means none. */
export interface ProjectLimits {
  readonly softBytes: number;
  readonly hardBytes: number;
  /** Files, directories and links the project may hold before its grace period starts. */
  readonly softInodes: number;
  /** Files, directories and links the project may hold at most. */
  readonly hardInodes: number;
}

/** No limits at all: what a project keeps when its volume goes. */
export const noProjectLimits: ProjectLimits = { softBytes: 0, hardBytes: 0, softInodes: 0, hardInodes: 0 };

/** The quota operations the provisioner needs on one mount. */
export interface ProjectQuotas {
  /** Makes directory `path` (on the mount) the top of project `projectId`; what it holds inherits it. */
  assign(path: string, projectId: number, signal: AbortSignal): Promise<void>;
  /** Sets every limit of project `projectId`, blocks and inodes; zero limits remove them. */
  limit(projectId: number, limits: ProjectLimits, signal: AbortSignal): Promise<void>;
  /** The use of every project with use or limits on the mount. */
  report(signal: AbortSignal): Promise<Map<number, ProjectUsage>>;
}

/** Runs `xfs_quota` in expert mode against the mount. */
export type RunXfsQuota = (args: readonly string[], signal: AbortSignal) => Promise<string>;

const runXfsQuota: RunXfsQuota = (args, signal) =>
  new Promise((resolve, reject) => {
    execFile('xfs_quota', args, { signal, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else
        reject(
          new Error(`xfs_quota ${args.join(' ')} failed: ${stderr.trim() || error.message}`, {
            cause: error,
          }),
        );
    });
  });

// Limits are given in KiB, the unit quotas count blocks in.
const kib = (bytes: number): string => `${Math.ceil(bytes / 1024)}k`;

/** An inode limit as a plain decimal: xfs_quota would read a suffix as a multiplier. */
function count(inodes: number): string {
  if (!Number.isSafeInteger(inodes) || inodes < 0) throw new Error(`${inodes} is not an inode limit`);
  return String(inodes);
}

/** {@link ProjectQuotas} of `mount` through `xfs_quota`. */
export function xfsQuota(mount: QuotaMount, run: RunXfsQuota = runXfsQuota): ProjectQuotas {
  const command = (subcommand: string, signal: AbortSignal): Promise<string> =>
    run([...(mount.fileSystem === 'ext4' ? ['-f'] : []), '-x', '-c', subcommand, mount.mountPoint], signal);
  return {
    async assign(path, projectId, signal) {
      // xfs_quota splits its command line on blanks and has no quoting to rely on.
      if (/[\s"'\\]/u.test(path))
        throw new Error(
          `cannot enforce a size on ${JSON.stringify(path)}: xfs_quota cannot take a path with blanks, quotes or backslashes`,
        );
      // Depth 0: the directory alone (new and empty); files made in it inherit the project.
      await command(`project -s -d 0 -p ${path} ${projectId}`, signal);
    },
    async limit(projectId, limits, signal) {
      const { softBytes, hardBytes, softInodes, hardInodes } = limits;
      // One command for all four: a volume is never left with new block limits and old inode ones.
      const inodes = `isoft=${count(softInodes)} ihard=${count(hardInodes)}`;
      await command(
        `limit -p bsoft=${kib(softBytes)} bhard=${kib(hardBytes)} ${inodes} ${projectId}`,
        signal,
      );
    },
    async report(signal) {
      return parseReport(await command('report -p -n -N -b -i', signal));
    },
  };
}

/**
 * Parses `report -p -n -N -b -i`: `#<id> <KiB used> <soft> <hard> <warnings> [<grace>] <inodes> …`,
 * where the grace is bracketed and may hold spaces (`[6 days]`).
 */
export function parseReport(text: string): Map<number, ProjectUsage> {
  const usage = new Map<number, ProjectUsage>();
  for (const line of text.split('\n')) {
    const fields = line
      .replace(/\[[^\]]*\]/gu, ' ')
      .trim()
      .split(/\s+/u);
    const id = /^#(\d+)$/u.exec(fields[0] ?? '')?.[1];
    const blocks = Number(fields[1]);
    const inodes = Number(fields[5]);
    if (id === undefined || !Number.isFinite(blocks) || !Number.isFinite(inodes)) continue;
    usage.set(Number(id), { bytes: blocks * 1024, inodes });
  }
  return usage;
}
