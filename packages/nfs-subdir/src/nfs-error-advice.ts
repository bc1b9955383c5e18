/**
 * What a refusal on an NFS mount usually means, said in the event: a kernel NFS client reports the
 * server's export options and its own bookkeeping through plain errnos, whose generic texts do not
 * name the cause. Each explanation keeps the operation, the path relative to the mount root and
 * the errno, and adds the cause and what to change:
 * - root refused (`EACCES`/`EPERM` as uid 0): the export squashes root (`root_squash`);
 * - `EBUSY` on a `.nfs…` file: a file deleted while this client still holds it open, kept by the
 *   kernel under that name until it is closed (a "silly rename");
 * - `EROFS`: the export or the mount is read-only;
 * - `ENOSPC`/`EDQUOT`: the export is full or a quota exhausted (NFS reports it when data is
 *   flushed, at `fsync` or `close`, not at `write`).
 */
import { statfsSync } from 'node:fs';
import { getSystemErrorMessage } from 'node:util';
import { isSafeFsError, SafeFsError } from '@kube-provisioner/safe-fs';

/** `statfs(2)` magic number of NFS (linux/magic.h). */
const nfsSuperMagic = 0x6969;

/** What to change on the server when root is squashed. */
export const rootSquashFix: string =
  "export it with no_root_squash, or with all_squash and anonuid/anongid of the export directory's owner, or make the directory writable for the server's anonymous user";

/** Whether `path` is on an NFS mount; false when that cannot be told. */
function onNfs(path: string, statfs: typeof statfsSync): boolean {
  try {
    return statfs(path).type === nfsSuperMagic;
  } catch {
    return false;
  }
}

/**
 * A temporary record (`.kube-provisioner.tmp.<writer>.<uuid>`) has a new name on every attempt;
 * the explanation names its directory instead, so that the retries' events aggregate into one.
 */
const temporaryRecord = /^(?:(.*)\/)?\.kube-provisioner\.tmp\.[^/]+$/u;

/** The name the Linux NFS client gives a file unlinked while open: `.nfs` and hex digits. */
const sillyRenamed = /(?:^|\/)\.nfs[0-9a-f]+$/u;

/** What {@link cause} looks at. */
interface Refusal {
  readonly errno: string | undefined;
  /** Relative to the mount root; empty when the call named no path (`fdatasync`). */
  readonly path: string;
}

/** Why the error happened and what to do, for the errors this module knows; `undefined` otherwise. */
function cause(
  refusal: Refusal,
  mountRoot: string,
  uid: number | undefined,
  statfs: typeof statfsSync,
): string | undefined {
  switch (refusal.errno) {
    case 'EACCES':
    case 'EPERM':
      if (uid !== 0 || !onNfs(mountRoot, statfs)) return undefined;
      return `root is refused on the NFS mount ${mountRoot}, so the export squashes root (root_squash) and the server runs this provisioner's requests as its anonymous user; ${rootSquashFix}`;
    case 'EBUSY':
      return sillyRenamed.test(refusal.path)
        ? 'a process using this NFS client still holds the file open, so the kernel keeps it under this name until it is closed (a "silly rename"); the delete is retried and completes once the file is closed'
        : undefined;
    case 'EROFS':
      return `the export is read-only (exported ro, or mounted ro at ${mountRoot}); export and mount it read-write`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the export is full or a quota is exhausted (over NFS this shows when data is flushed, at fsync or close); free space on the server or grow the export; the operation is retried';
    default:
      return undefined;
  }
}

/**
 * Whether `err` is the refusal to remove a file that a process of this NFS client still holds open
 * (`EBUSY` on the `.nfs…` name the kernel gave it when it was deleted): it passes once the file is
 * closed, after which the kernel removes it.
 */
export function isHeldOpenFile(err: unknown): boolean {
  return isSafeFsError(err) && err.errno === 'EBUSY' && sillyRenamed.test(err.path);
}

/**
 * `err` with the cause and the fix added when it is one of the refusals above, met below
 * `mountRoot`: a {@link SafeFsError} keeps its kind, operation and path; a system error from a call
 * that names no path (`fdatasync` of a record) becomes an `Error` naming the call. `undefined` for
 * any other error, which the generic advice covers.
 */
export function explainNfsError(
  err: unknown,
  mountRoot: string,
  uid: number | undefined = process.getuid?.(),
  statfs: typeof statfsSync = statfsSync,
): Error | undefined {
  if (!isSafeFsError(err)) {
    const raw = err as Partial<NodeJS.ErrnoException> | null;
    if (typeof raw?.errno !== 'number' || typeof raw.code !== 'string') return undefined;
    const why = cause({ errno: raw.code, path: '' }, mountRoot, uid, statfs);
    if (why === undefined) return undefined;
    const call = raw.syscall ?? 'write';
    return new Error(`${call}: ${getSystemErrorMessage(raw.errno)} (${raw.code}): ${why}`, { cause: err });
  }
  const why = cause({ errno: err.errno, path: err.path }, mountRoot, uid, statfs);
  if (why === undefined) return undefined;
  const prefix = `${err.operation} ${JSON.stringify(err.path)}: `;
  const refusal = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  const temporary = temporaryRecord.exec(err.path);
  return new SafeFsError({
    kind: err.kind,
    path: temporary ? (temporary[1] ?? '.') : err.path,
    operation: temporary ? `${err.operation} a temporary record in` : err.operation,
    detail: `${refusal}: ${why}`,
    errno: err.errno,
    cause: err,
  });
}
