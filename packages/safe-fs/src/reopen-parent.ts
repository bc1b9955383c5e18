/**
 * The walks that bound their open descriptors (a removal, a usage scan) close the levels above the
 * deepest ones and, climbing back, reopen a parent through `..` of its open child. Only the directory
 * they left is accepted: a tree moved meanwhile is never followed out of the volume.
 */
import { type DirectoryHandle, type Identity, sameIdentity } from './directory-handle.ts';
import { SafeFsError } from './errors.ts';

/** What the walk was doing, for the error when the tree moved. */
export interface WalkStep {
  readonly operation: string;
  readonly detail: string;
}

/** Reopens the parent of the open `child`; throws when it is not the directory of `parent`. */
export async function reopenParent(
  parent: Identity,
  child: DirectoryHandle,
  moved: WalkStep,
): Promise<DirectoryHandle> {
  const reopened = await child.openDirectory('..');
  if (reopened !== undefined) {
    if (sameIdentity(await reopened.stat(), parent)) return reopened;
    await reopened.close();
  }
  throw new SafeFsError({ kind: 'io', path: child.path, ...moved });
}
