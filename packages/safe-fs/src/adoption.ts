/**
 * Taking over an existing directory for a claim (see "Ownership" in the package README): when it
 * is allowed, and how a released record is replaced without two claims both winning.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import { errnoCode, SafeFsError } from './errors.ts';
import {
  type OwnershipRecord,
  readOwnershipRecord,
  type VolumeOwner,
  writeOwnershipRecord,
} from './ownership-record.ts';
import { findReservedName } from './reserved-name-search.ts';
import { adoptionLockName, recordName } from './reserved-names.ts';
import { refuseParentAsVolume } from './volume-like.ts';

/** What a claim asks for when it may take over existing data. */
export interface AdoptionRequest {
  readonly owner: VolumeOwner;
  readonly adopt?: boolean | undefined;
  readonly namespaceScopedPath?: boolean | undefined;
  /**
   * Let a flat path (no `/`) adopt unrecorded data when it starts with `<namespace>-`. Ambiguous:
   * namespace `a` with claim `b-c` renders what namespace `a-b` with claim `c` does, so a claim can
   * take over another namespace's data. Off by default; only with {@link namespaceScopedPath}.
   */
  readonly adoptAmbiguousNamespacePrefix?: boolean | undefined;
}

/**
 * Whether `path` lies below `namespace`: its first segment is exactly the namespace; or, only when
 * the class accepts the ambiguity, a flat name (no `/`) starting with `<namespace>-`, as upstream's
 * default `<ns>-<pvc>-<pv>` does. A nested path whose first segment merely starts with
 * `<namespace>-` belongs to another namespace as often as to this one (`team-a-b/…`).
 */
function isNamespacePath(path: string, namespace: string, acceptPrefix: boolean): boolean {
  const [first = ''] = path.split('/');
  if (path.includes('/')) return first === namespace;
  return acceptPrefix && first.startsWith(`${namespace}-`);
}

/** An `ownership` refusal of `path`. */
export function ownershipError(path: string, detail: string): SafeFsError {
  return new SafeFsError({ kind: 'ownership', path, operation: 'claim', detail });
}

/**
 * Refuses to take over `leaf` unless adoption was asked for and the data is the claim's own.
 * A live record belongs to one volume: only a record naming this very PV (left by an earlier
 * attempt) is taken over, since adopting another claim's live volume would leave two PVs on one
 * directory. A released record (its PV kept the data and is gone) is taken over when it names the
 * claim's namespace. Unrecorded data needs the caller's word that only this namespace's claims can
 * render the path (`namespaceScopedPath`: a first segment read from an annotation proves nothing),
 * must lie below the namespace or carry it as a flat prefix (`<ns>-…`) and hold nothing of this package: a parent
 * marker or a record anywhere inside means other volumes live there, and their data and records
 * would be handed to this claim's workload. Messages never name the other claim: they end up in an
 * event the requesting tenant can read.
 */
export async function checkAdoption(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord | undefined,
  request: AdoptionRequest,
): Promise<void> {
  const path = dir.pathOf(leaf);
  const found =
    record === undefined ? 'already exists without an ownership record' : 'belongs to another claim';
  if (request.adopt !== true) throw ownershipError(path, `${found}; refusing to reuse it`);
  const { namespace, pvName } = request.owner;
  const acceptPrefix = request.adoptAmbiguousNamespacePrefix === true;
  const sameNamespace =
    record === undefined ? isNamespacePath(path, namespace, acceptPrefix) : record.namespace === namespace;
  if (!sameNamespace) {
    throw ownershipError(
      path,
      `${found}; adoption is limited to data of namespace ${JSON.stringify(namespace)}: below a first segment that is exactly the namespace${path.includes('/') || acceptPrefix ? '' : ', or a flat name starting with "<namespace>-" when the class accepts that this prefix is ambiguous'}`,
    );
  }
  if (record !== undefined) {
    if (record.pvName !== pvName && record.releasedAt === undefined) {
      throw ownershipError(
        path,
        `${found}, which still uses it; only released or unrecorded data can be adopted`,
      );
    }
    return;
  }
  if (request.namespaceScopedPath !== true) {
    throw ownershipError(
      path,
      `${found}; unrecorded data is adopted only when the path pattern starts with the namespace ("\${.PVC.namespace}/…" or "\${.PVC.namespace}-…"), so no other namespace can name it`,
    );
  }
  const volume = await dir.openDirectory(leaf);
  if (volume === undefined) throw ownershipError(path, 'vanished while being adopted');
  try {
    await refuseParentAsVolume(volume);
    // An upstream provisioner's nested volumes have no records, only names like volumes'.
    const found = await findReservedName(volume, { volumeLike: true });
    if (found !== undefined) {
      throw ownershipError(
        path,
        `holds ${JSON.stringify(found)}: volumes, records or parent markers of a provisioner, which deleting this claim's volume would take along; refusing to adopt it`,
      );
    }
  } finally {
    await volume.close();
  }
}

/**
 * Replaces the released record of `leaf` with `record`. Two claims may try at once, so the new
 * record is first published exclusively as the adoption lock, and only the lock's holder checks the
 * record again and renames the lock over it: the record never goes missing, and no claim's new
 * record is replaced by another's. A lock naming this claim was left by its own interrupted attempt.
 */
export async function replaceReleased(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord,
): Promise<void> {
  const path = dir.pathOf(leaf);
  const lock = adoptionLockName(leaf);
  try {
    await writeOwnershipRecord(dir, leaf, record, false, lock);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    if ((await readOwnershipRecord(dir, leaf, lock))?.claimUid !== record.claimUid) {
      throw ownershipError(path, 'is being adopted concurrently by another claim');
    }
  }
  try {
    const current = await readOwnershipRecord(dir, leaf);
    if (current?.releasedAt === undefined || current.namespace !== record.namespace) {
      throw ownershipError(path, 'changed owner while being adopted');
    }
    await dir.rename(lock, recordName(leaf));
  } catch (err) {
    await dir.unlink(lock).catch(() => undefined);
    throw err;
  }
}
