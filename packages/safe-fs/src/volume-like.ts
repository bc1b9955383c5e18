/**
 * Recognises directories that are volumes of someone else. Volumes must not nest: a volume inside
 * another is readable, writable, and can be replaced by a symlink, by the outer volume's workload.
 */

import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { SafeFsError } from './errors.ts';
import { parentMarkerName, volumeMarkerName } from './marker-names.ts';

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

/**
 * Refuses `child`, the directory `name` in `dir`, as a parent of a volume when it is a volume itself:
 * it has an ownership record, or it is named like one and was not made by this package as a parent
 * (no parent marker inside), unless `allowUnrecorded` (an explicit adoption) says the unrecorded
 * directory may host the volume.
 */
export async function refuseVolumeParent(
  dir: DirectoryHandle,
  name: EntryName,
  child: DirectoryHandle,
  allowUnrecorded: boolean,
): Promise<void> {
  if (typeof name === 'string' && (await dir.lstat(volumeMarkerName(name))) !== undefined) {
    throw nestingError(dir.pathOf(name), 'is a volume itself; volumes cannot be nested');
  }
  if (allowUnrecorded || typeof name !== 'string' || !looksLikeVolume(name)) return;
  if ((await child.lstat(parentMarkerName)) !== undefined) return;
  throw nestingError(
    dir.pathOf(name),
    'is named like a volume (pvc-…, <ns>-<pvc>-pvc-<uid>, archived-…) and was not made by this provisioner as a parent; volumes cannot be nested (adopt it explicitly to allow this)',
  );
}
