/**
 * The chain of directories from the base down to a volume's parent: opened one descriptor at a
 * time without following links, and pruned again after a removal when this package made them.
 */

import { type DirectoryHandle, openBase } from './directory-handle.ts';
import { listIfFewer } from './directory-listing.ts';
import { errnoCode } from './errors.ts';
import {
  isParentInProgress,
  parentInProgressMode,
  readParentMarker,
  writeParentMarker,
} from './parent-marker.ts';
import type { RelativeVolumePath } from './relative-volume-path.ts';
import { parentMarkerName } from './reserved-names.ts';
import { parseStoredPath } from './snapshot-area.ts';
import type { VolumeContext } from './volume-context.ts';
import { refuseVolumeParent } from './volume-like.ts';

/** A volume path as the parents leading to it and its own name. */
export interface SplitPath {
  readonly parents: readonly string[];
  readonly leaf: string;
}

/**
 * Splits a validated path (validated again here: the brand is a promise, not a proof); a snapshot
 * path's reserved area is accepted, the package makes those itself.
 */
export function split(path: RelativeVolumePath): SplitPath {
  const segments = parseStoredPath(path).split('/');
  const leaf = segments.pop() ?? '';
  return { parents: segments, leaf };
}

/** What {@link withParents} hands its callback. */
export interface ParentChain {
  /** Base first, then each parent; `at(-1)` is the volume's parent. */
  readonly chain: readonly DirectoryHandle[];
  readonly parents: readonly string[];
  /** The volume's parent directory. */
  readonly dir: DirectoryHandle;
  readonly leaf: string;
}

/** Closes every handle, ignoring none of the errors: a failed close is a bug worth seeing. */
export async function closeAll(handles: readonly DirectoryHandle[]): Promise<void> {
  await Promise.all(handles.map((handle) => handle.close()));
}

/**
 * Opens the base and every parent of `path` without creating anything, and runs `fn` with them;
 * returns `ifMissing` when a parent does not exist. With `refuseNested`, a parent that is a volume
 * itself is refused (deleting or archiving a path inside another volume would destroy its data).
 * With `readOnly`, the leaf's directory is not swept of temporary files (a read never writes).
 */
export async function withParents<T>(
  context: VolumeContext,
  path: RelativeVolumePath,
  options: { readonly ifMissing: T; readonly refuseNested: boolean; readonly readOnly?: boolean },
  fn: (parents: ParentChain) => Promise<T>,
): Promise<T> {
  const { parents, leaf } = split(path);
  const chain: DirectoryHandle[] = [];
  try {
    let dir = await openBase(context.fs, context.base);
    chain.push(dir);
    for (const name of parents) {
      const next = await dir.openDirectory(name);
      if (next === undefined) return options.ifMissing;
      chain.push(next);
      if (options.refuseNested) {
        await refuseVolumeParent(dir, name, next, { allowUnrecorded: false, ownParentsOnly: false });
      }
      dir = next;
    }
    if (options.readOnly !== true) await context.touch(dir);
    return await fn({ chain, parents, dir, leaf });
  } finally {
    await closeAll(chain);
  }
}

/**
 * Removes `dir` (named `name` in `parent`) if this package created it as a parent and nothing but
 * that marker is left in it. Returns whether it was removed; losing a race is not an error. The
 * directory takes {@link parentInProgressMode} before its marker goes, and gets both back when
 * something was put into it meanwhile. `undoingCreate` says this very call made it and is taking it
 * back: it may still have that mode.
 */
export async function removeCreatedParent(
  parent: DirectoryHandle,
  dir: DirectoryHandle,
  name: string,
  undoingCreate = false,
): Promise<boolean> {
  // Two names at most: whether the marker is all there is needs no more.
  const names = await listIfFewer(dir, 2);
  if (names?.length !== 1 || names[0] !== parentMarkerName) return false;
  const [stats, marker] = [await dir.stat(), await readParentMarker(dir)];
  // Another removal is under way (or the marker just went): it is theirs to finish.
  if (marker === undefined || (isParentInProgress(stats) && !undoingCreate)) return false;
  if (!isParentInProgress(stats)) await dir.setAttributes(parentInProgressMode, undefined, undefined);
  try {
    await dir.unlink(parentMarkerName);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false;
    throw err;
  }
  try {
    await parent.rmdir(name);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return false;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    // A create put a volume in it meanwhile: it stays a parent, marked and usable again.
    await writeParentMarker(dir, marker);
    await dir.setAttributes(stats.mode & 0o7777, undefined, undefined);
    return false;
  }
}

/** Removes now-empty parents this package created, deepest first, never the base (`chain[0]`). */
export async function removeEmptyParents(
  chain: readonly DirectoryHandle[],
  parents: readonly string[],
): Promise<void> {
  for (let depth = parents.length; depth > 0; depth--) {
    const [parent, dir, name] = [chain[depth - 1], chain[depth], parents[depth - 1]];
    if (parent === undefined || dir === undefined || name === undefined) return;
    if (!(await removeCreatedParent(parent, dir, name))) return;
  }
}
