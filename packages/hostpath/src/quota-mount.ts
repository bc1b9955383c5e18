/**
 * Whether a root can have its volumes' sizes enforced: the file system it is on, read from
 * `/proc/self/mountinfo`, must be XFS or ext4 mounted with project-quota enforcement (`prjquota`).
 */

/** File systems whose project quotas the provisioner sets. */
export type QuotaFileSystemType = 'xfs' | 'ext4';

/** The mount holding a root, when its project quotas are enforced. */
export interface QuotaMount {
  readonly fileSystem: QuotaFileSystemType;
  /** Where it is mounted: the path `xfs_quota` is given. */
  readonly mountPoint: string;
}

/** A root's mount with enforced project quotas, or why it has none. */
export type QuotaMountCheck =
  | { readonly enforced: true; readonly mount: QuotaMount }
  | { readonly enforced: false; readonly reason: string };

interface MountEntry {
  readonly mountPoint: string;
  readonly fileSystem: string;
  readonly superOptions: readonly string[];
}

// mountinfo escapes space, tab, newline and backslash as octal.
const unescapeOctal = (field: string): string =>
  field.replace(/\\([0-7]{3})/gu, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    // `id parent major:minor root mountpoint options [optional…] - fstype source superoptions`
    const fields = line.split(' ');
    const separator = fields.indexOf('-', 6);
    const mountPoint = fields[4];
    const fileSystem = fields[separator + 1];
    if (separator < 0 || mountPoint === undefined || fileSystem === undefined) continue;
    entries.push({
      mountPoint: unescapeOctal(mountPoint),
      fileSystem,
      superOptions: (fields[separator + 3] ?? '').split(','),
    });
  }
  return entries;
}

const isUnder = (path: string, mountPoint: string): boolean =>
  mountPoint === '/' || path === mountPoint || path.startsWith(`${mountPoint}/`);

/**
 * The mount `root` (an absolute path without symbolic links) is on, judged from the text of
 * `/proc/self/mountinfo`: the last-mounted entry with the longest mount point above it.
 */
export function checkQuotaMount(root: string, mountInfo: string): QuotaMountCheck {
  let found: MountEntry | undefined;
  for (const entry of parseMountInfo(mountInfo)) {
    if (isUnder(root, entry.mountPoint) && entry.mountPoint.length >= (found?.mountPoint.length ?? 0)) {
      found = entry;
    }
  }
  if (found === undefined) return { enforced: false, reason: `no mount holds ${root}` };
  const { fileSystem, mountPoint, superOptions } = found;
  const on = `the root ${root} is on ${fileSystem} (mounted at ${mountPoint})`;
  if (fileSystem !== 'xfs' && fileSystem !== 'ext4') {
    return {
      enforced: false,
      reason: `${on}, which has no project quotas: sizes can be enforced on XFS or ext4 mounted with the "prjquota" option`,
    };
  }
  if (!superOptions.includes('prjquota')) {
    const ext4 =
      fileSystem === 'ext4'
        ? ' (ext4 also needs the "project" and "quota" features: tune2fs -O project,quota)'
        : '';
    return {
      enforced: false,
      reason: `${on} without the mount option "prjquota": mount it with -o prjquota to enforce sizes${ext4}`,
    };
  }
  return { enforced: true, mount: { fileSystem, mountPoint } };
}
