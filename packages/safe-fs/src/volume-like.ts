/**
 * Recognises directories that are volumes of someone else. Volumes must not nest: a volume inside
 * another is readable, writable, and can be replaced by a symlink, by the outer volume's workload.
 */

import { type DirectoryHandle, type EntryName, nameText } from './directory-handle.ts';
import { findEntry } from './directory-listing.ts';
import { SafeFsError } from './errors.ts';
import { isParentInProgress } from './parent-marker.ts';
import { isReservedName, parentMarkerName, recordName } from './reserved-names.ts';

const pvUidName = /(^|-)pvc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}($|-)/u;

/**
 * Whether directory name `name` follows the naming of provisioned volumes: a PV name (`pvc-…`), the
 * upstream default `<ns>-<pvc>-pvc-<uid>`, or an archive (`archived-…`). Such a directory made by
 * an upstream provisioner has no record, and is a volume all the same.
 */
export function looksLikeVolume(name: string): boolean {
  return name.startsWith('pvc-') || name.startsWith('archived-') || pvUidName.test(name);
}

function nestingError(path: string, detail: string): SafeFsError {
  return new SafeFsError({ kind: 'ownership', path, operation: 'open', detail });
}

/** Which existing directories {@link refuseVolumeParent} lets hold a volume. */
export interface VolumeParentPolicy {
  /** An explicit adoption: an unrecorded directory named like a volume may hold the new volume. */
  readonly allowUnrecorded: boolean;
  /**
   * Only directories this package made as parents (marked, or being made): a directory someone else
   * made is theirs to change, and they could swap the volume's path for a link (hostPath volumes
   * are mounted by following links).
   */
  readonly ownParentsOnly: boolean;
}

/**
 * Refuses `child`, the directory `name` in `dir`, as a parent of a volume when it is a volume itself:
 * it has an ownership record, or it is named like one and was not made by this package as a parent
 * (no parent marker inside), unless `policy.allowUnrecorded` (an explicit adoption) says the
 * unrecorded directory may host the volume. With `policy.ownParentsOnly`, any directory this
 * package did not make as a parent is refused.
 */
export async function refuseVolumeParent(
  dir: DirectoryHandle,
  name: EntryName,
  child: DirectoryHandle,
  policy: VolumeParentPolicy,
): Promise<void> {
  if (typeof name === 'string' && (await dir.lstat(recordName(name))) !== undefined) {
    throw nestingError(dir.pathOf(name), 'is a volume itself; volumes cannot be nested');
  }
  const isOwnParent = async () =>
    (await child.lstat(parentMarkerName)) !== undefined || isParentInProgress(await child.stat());
  if (policy.ownParentsOnly) {
    if (await isOwnParent()) return;
    throw nestingError(
      dir.pathOf(name),
      'was not made by this provisioner as a parent; a volume below a directory someone else controls could be swapped for a link, so volumes go only below directories this provisioner made',
    );
  }
  if (policy.allowUnrecorded || typeof name !== 'string' || !looksLikeVolume(name)) return;
  if (await isOwnParent()) return;
  throw nestingError(
    dir.pathOf(name),
    'is named like a volume (pvc-…, <ns>-<pvc>-pvc-<uid>, archived-…) and was not made by this provisioner as a parent; volumes cannot be nested (adopt it explicitly to allow this)',
  );
}

/**
 * Refuses to take `volume` (an existing directory of that name) as a volume when it is a parent of
 * this package: made or removed right now ({@link isParentInProgress}), or holding a reserved name. Its
 * mode is read before and after its entries, so a parent passing between those two states while
 * this runs is still seen in one of them.
 */
export async function refuseParentAsVolume(volume: DirectoryHandle): Promise<void> {
  const before = await volume.stat();
  // Read in batches up to the first reserved name: the volume's width is its workload's.
  const reserved = await findEntry(volume, (name) => isReservedName(nameText(name)));
  const after = await volume.stat();
  if (!isParentInProgress(before) && reserved === undefined && !isParentInProgress(after)) return;
  throw nestingError(
    volume.path,
    'is a parent directory of other volumes (or is being made as one), not a volume; volumes cannot be nested',
  );
}
