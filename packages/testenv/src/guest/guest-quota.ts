/**
 * File systems with project quotas inside the guest, for size-enforcement tests: XFS or ext4 on a
 * loop device backed by a sparse file on the guest's scratch disk, mounted with `prjquota`. A
 * project is a directory tree with a block limit: writes beyond it fail with `ENOSPC` on XFS and
 * `EDQUOT` on ext4, and `statfs` of the directory reports the limit as the file system's size.
 * ext4 does not limit a writer with `CAP_SYS_RESOURCE` (root): write as {@link guestUser}.
 */
import type { Guest } from './guest.ts';
import { guestScratchMount } from './guest-init.ts';

/** File system types with project quotas. */
export type QuotaFileSystemType = 'xfs' | 'ext4';

/** Options of {@link createQuotaFileSystem}. */
export interface QuotaFileSystemOptions {
  readonly type: QuotaFileSystemType;
  /** Size of the (sparse) file system; default 512 MiB (XFS needs at least 300 MiB). */
  readonly sizeMiB?: number;
  /** Where to mount it inside the guest; default `/mnt/<type>-<n>`. */
  readonly mountPoint?: string;
}

/** What `statfs` says about a directory: its project's limit and use, on a quota file system. */
export interface DirectorySpace {
  readonly sizeBytes: number;
  readonly usedBytes: number;
}

/** A mounted file system with project quotas inside the guest. */
export interface QuotaFileSystem {
  readonly type: QuotaFileSystemType;
  /** Mount point inside the guest. */
  readonly mountPoint: string;
  /** The loop device it is on. */
  readonly device: string;
  /**
   * Makes directory `path` (below the mount point, created if missing, handed to {@link guestUser}
   * when `owner` says so) project `projectId` with a hard block limit of `limitMiB`.
   */
  limitProject(
    path: string,
    projectId: number,
    limitMiB: number,
    owner?: { readonly uid: number; readonly gid: number },
  ): Promise<void>;
  /** `statfs` of a path: the project's limit and use for a project directory. */
  space(path: string): Promise<DirectorySpace>;
  /** Unmounts it and frees the loop device and its backing file. */
  remove(): Promise<void>;
}

let count = 0;

/** Formats and mounts a file system with project quotas inside `guest`. */
export async function createQuotaFileSystem(
  guest: Guest,
  options: QuotaFileSystemOptions,
): Promise<QuotaFileSystem> {
  const n = ++count;
  const { type } = options;
  const image = `${guestScratchMount}/${type}-${n}.img`;
  const mountPoint = options.mountPoint ?? `/mnt/${type}-${n}`;
  const mkfs =
    type === 'xfs'
      ? 'mkfs.xfs -q "$dev"'
      : // The quota feature keeps the usage in hidden inodes; prjquota enables project accounting.
        'mkfs.ext4 -q -O quota,project -E quotatype=prjquota "$dev"';
  const device = (
    await guest.sh(
      `truncate -s "$2"M "$1" && dev=$(losetup -f --show "$1") && ${mkfs} && mkdir -p "$3" && mount -o prjquota "$dev" "$3" && echo "$dev"`,
      { args: [image, String(options.sizeMiB ?? 512), mountPoint] },
    )
  ).trim();
  const inside = (path: string): string => `${mountPoint}/${path.replace(/^\/+/u, '')}`;

  return {
    type,
    mountPoint,
    device,
    async limitProject(path, projectId, limitMiB, owner) {
      const dir = inside(path);
      const chown = owner === undefined ? '' : `chown "${owner.uid}:${owner.gid}" "$1" && `;
      // One project per xfs_quota invocation: several `project -s` in one run pile their paths up.
      const script =
        type === 'xfs'
          ? `mkdir -p "$1" && ${chown}xfs_quota -x -c "project -s -p $1 $2" "$4" >/dev/null && xfs_quota -x -c "limit -p bhard=$3m $2" "$4"`
          : `mkdir -p "$1" && ${chown}chattr +P -p "$2" "$1" && setquota -P "$2" 0 $(($3 * 1024)) 0 0 "$4"`;
      await guest.sh(script, { args: [dir, String(projectId), String(limitMiB), mountPoint] });
    },
    async space(path) {
      // Total blocks, free blocks, block size.
      const output = await guest.sh('stat -f -c "%b %f %S" "$1"', { args: [inside(path)] });
      const [blocks = Number.NaN, free = Number.NaN, blockSize = Number.NaN] = output
        .trim()
        .split(' ')
        .map(Number);
      return { sizeBytes: blocks * blockSize, usedBytes: (blocks - free) * blockSize };
    },
    async remove() {
      await guest.sh('umount "$1" && losetup -d "$2" && rm -f "$3" && rmdir "$1"', {
        args: [mountPoint, device, image],
      });
    },
  };
}
