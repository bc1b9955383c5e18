/**
 * Permission problems of a volume root, said so that an operator can act on them: which directory,
 * which errno, which identity the process has, and the ways out (the usual cause is a non-root
 * provisioner on a root-owned export, or `root_squash`).
 */
import { access, constants } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { getSystemErrorMessage } from 'node:util';
import { errnoCode, isPermissionError, isSafeFsError, SafeFsError } from './errors.ts';

/** What an operator can change when the provisioner may not write its root. */
export const permissionFix: string =
  'run the provisioner as root (the image default), give its pod a group that may write there ' +
  '(securityContext.fsGroup or supplementalGroups), or make the directory writable for it ' +
  '(owner or mode; on NFS also the export options, e.g. no_root_squash or all_squash with anonuid)';

/** `uid 1000, gid 1000`. */
function processIdentity(): string {
  return process.getuid && process.getgid ? `uid ${process.getuid()}, gid ${process.getgid()}` : 'this user';
}

function systemDescription(err: unknown): string {
  const errno = (err as { errno?: unknown } | null)?.errno;
  const code = errnoCode(err);
  const text = typeof errno === 'number' ? getSystemErrorMessage(errno) : (err as Error).message;
  return code === undefined ? text : `${text} (${code})`;
}

/**
 * Adds the root, the process identity and {@link permissionFix} to a permission failure
 * (`EACCES`/`EPERM`, as a {@link SafeFsError} or a raw system error) met below `root`; the result is
 * a `permission` {@link SafeFsError} whose message still starts with the operation, the path
 * relative to the root and the errno. Any other error is returned unchanged.
 */
export function explainPermissionError(err: unknown, root: string): unknown {
  if (!isPermissionError(err)) return err;
  let path = '.';
  let operation = 'access';
  let detail = systemDescription(err);
  if (isSafeFsError(err)) {
    ({ path, operation } = err);
    detail = err.message.slice(`${operation} ${JSON.stringify(path)}: `.length);
  } else {
    const raw = err as { path?: unknown; syscall?: unknown };
    const inside = typeof raw.path === 'string' && isAbsolute(raw.path) ? relative(root, raw.path) : '';
    if (inside !== '' && !inside.startsWith('..')) path = inside;
    if (typeof raw.syscall === 'string') operation = raw.syscall;
  }
  return new SafeFsError({
    kind: 'permission',
    path,
    operation,
    detail: `${detail} in ${root} as ${processIdentity()}; ${permissionFix}`,
    errno: errnoCode(err),
    cause: err,
  });
}

/**
 * Resolves when this process may create and delete entries in `directory`; otherwise rejects with
 * an error naming the directory, the errno and, for a permission refusal, {@link permissionFix}.
 * `access(2)` leaves nothing behind and, over NFS, asks the server, so `root_squash` is seen.
 */
export async function checkWritableDirectory(
  directory: string,
  probe: (path: string, mode: number) => Promise<void> = access,
): Promise<void> {
  try {
    await probe(directory, constants.W_OK | constants.X_OK);
  } catch (err) {
    const fix = isPermissionError(err) ? `; ${permissionFix}` : '';
    throw new Error(`${directory} is not writable by ${processIdentity()}: ${systemDescription(err)}${fix}`, {
      cause: err,
    });
  }
}
