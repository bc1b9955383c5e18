/**
 * The one error type of this package. Callers turn it into events and retry decisions: `kind` says
 * what class of failure it is, `path` says where (relative to the base, so events never leak host
 * paths), `errno` keeps the system code.
 */

import { getSystemErrorMessage } from 'node:util';
import { isWriteRefusal } from './write-refusal.ts';

const safeFsErrorBrand: unique symbol = Symbol.for('@kube-provisioner/safe-fs/SafeFsError');

/**
 * - `invalid-path`: a path, pattern render or PV path was refused before any filesystem call.
 * - `symlink`: a component below the base is a symbolic link; nothing was followed.
 * - `not-a-directory`: a component that must be a directory is something else.
 * - `ownership`: the ownership record forbids the operation (another claim's directory, unmarked
 *   data without adoption, a PV naming a directory that belongs to another PV).
 * - `permission`: the system refused with `EACCES` or `EPERM`; retrying at full speed will not help.
 * - `io`: any other system error.
 */
export type SafeFsErrorKind =
  | 'invalid-path'
  | 'symlink'
  | 'not-a-directory'
  | 'ownership'
  | 'permission'
  | 'io';

/** Fields of a {@link SafeFsError}. */
export interface SafeFsErrorInit {
  readonly kind: SafeFsErrorKind;
  /** Relative to the base (`.` for the base itself); for `invalid-path`, the refused input. */
  readonly path: string;
  /** What was being done, e.g. `mkdir`, `open`, `rename`. */
  readonly operation: string;
  /** Human-readable detail; appended after the operation and path. */
  readonly detail: string;
  /** System error code such as `EACCES`, when the failure came from the system. */
  readonly errno?: string | undefined;
  readonly cause?: unknown;
}

/** A refused or failed filesystem operation; recognised across package copies by {@link isSafeFsError}. */
export class SafeFsError extends Error {
  override readonly name = 'SafeFsError';
  readonly kind: SafeFsErrorKind;
  readonly path: string;
  readonly operation: string;
  readonly errno: string | undefined;

  constructor(init: SafeFsErrorInit) {
    super(`${init.operation} ${JSON.stringify(init.path)}: ${init.detail}`, { cause: init.cause });
    Object.defineProperty(this, safeFsErrorBrand, { value: true, enumerable: false });
    this.kind = init.kind;
    this.path = init.path;
    this.operation = init.operation;
    this.errno = init.errno;
  }
}

/** Whether `err` is a {@link SafeFsError} from any copy of this package. */
export function isSafeFsError(err: unknown): err is SafeFsError {
  return (
    typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[safeFsErrorBrand] === true
  );
}

/**
 * Whether `err` is a {@link SafeFsError} that a prompt retry of the same request meets again: a
 * refused path or pattern render (`invalid-path`), or a permission refusal (`permission`, which
 * under `root_squash` does not heal quickly). Provisioners report these as infeasible.
 */
export function isPersistentRefusal(err: unknown): boolean {
  return isSafeFsError(err) && (err.kind === 'invalid-path' || err.kind === 'permission');
}

const permissionCodes: ReadonlySet<string> = new Set(['EACCES', 'EPERM']);

/**
 * Whether `err` is a permission failure (`EACCES`/`EPERM`), either a {@link SafeFsError} or a raw
 * Node.js system error. Provisioners treat these as infeasible: under `root_squash` they do not heal
 * by retrying quickly.
 */
export function isPermissionError(err: unknown): boolean {
  if (isSafeFsError(err)) return err.kind === 'permission';
  return permissionCodes.has(errnoCode(err) ?? '');
}

/** The system error code (`ENOENT`…) of a Node.js system error or a {@link SafeFsError}. */
export function errnoCode(err: unknown): string | undefined {
  if (isSafeFsError(err)) return err.errno;
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Wraps a system error from `operation` on `path` (relative to the base). */
export function systemError(err: unknown, operation: string, path: string): Error {
  if (isSafeFsError(err)) return err;
  // A caller's guard said stop: its own error, not a system error.
  if (isWriteRefusal(err)) return err as Error;
  const code = errnoCode(err);
  const errno = (err as { errno?: unknown } | null)?.errno;
  const description =
    typeof errno === 'number'
      ? getSystemErrorMessage(errno)
      : err instanceof Error
        ? err.message
        : String(err);
  return new SafeFsError({
    kind: code !== undefined && permissionCodes.has(code) ? 'permission' : 'io',
    path,
    operation,
    detail: code === undefined ? description : `${description} (${code})`,
    errno: code,
    cause: err,
  });
}
