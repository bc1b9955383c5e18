/**
 * The one rule take-back and retention share: a kept volume's record (retained or archived) is
 * changed only under its adoption lock, by whoever holds it, and only while the record is still
 * exactly the one the change was decided on. The lock is published exclusively (`link(2)` fails on
 * an existing name) with the new record in it, the record is read again and checked under it, and
 * the lock is renamed over the record: that `rename(2)` is the change and the unlock at once. A
 * take-back reserving the data and the retention sweep stamping it for removal are both such
 * changes, so of the two exactly one happens, and the other sees it.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import { errnoCode } from './errors.ts';
import { type OwnershipRecord, readOwnershipRecord, writeOwnershipRecord } from './ownership-record.ts';
import { adoptionLockName, recordName } from './reserved-names.ts';

/** A change of the record of one volume, decided on what the record said. */
export interface LockedRecordChange {
  /** The record the change was decided on; nothing changes unless the record is still exactly it. */
  readonly basis: OwnershipRecord;
  /** The record that replaces it. */
  readonly replacement: OwnershipRecord;
  /**
   * For a lock found held: the basis it was decided on when it is this caller's own (left by an
   * interrupted call of the same caller, which this call finishes), else `undefined`.
   */
  readonly resume: (holder: OwnershipRecord) => OwnershipRecord | undefined;
  /** Further checks under the lock, once the record is found unchanged; a throw releases the lock. */
  readonly check?: ((current: OwnershipRecord) => Promise<void>) | undefined;
}

/**
 * - `changed`: the record was replaced.
 * - `held`: someone else holds the lock (`holder` is what it would write; `undefined` when its
 *   change landed meanwhile).
 * - `stale`: the record is no longer the basis (`current`, `undefined` when it is gone).
 */
export type LockedRecordOutcome =
  | { readonly outcome: 'changed' }
  | { readonly outcome: 'held'; readonly holder: OwnershipRecord | undefined }
  | { readonly outcome: 'stale'; readonly current: OwnershipRecord | undefined };

/** Whether two records say the same (both as read by `readOwnershipRecord`, so in one field order). */
export function sameRecord(a: OwnershipRecord | undefined, b: OwnershipRecord | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Makes `change` to the record of volume `leaf` in `dir` under its adoption lock; see the module. */
export async function changeRecordLocked(
  dir: DirectoryHandle,
  leaf: string,
  change: LockedRecordChange,
): Promise<LockedRecordOutcome> {
  const lock = adoptionLockName(leaf);
  let basis = change.basis;
  try {
    await writeOwnershipRecord(dir, leaf, change.replacement, false, lock);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    const holder = await readOwnershipRecord(dir, leaf, lock);
    const resumed = holder === undefined ? undefined : change.resume(holder);
    if (resumed === undefined) return { outcome: 'held', holder };
    basis = resumed;
  }
  try {
    const current = await readOwnershipRecord(dir, leaf);
    if (!sameRecord(current, basis)) {
      await dir.unlink(lock);
      return { outcome: 'stale', current };
    }
    if (current !== undefined) await change.check?.(current);
    await dir.rename(lock, recordName(leaf));
    return { outcome: 'changed' };
  } catch (err) {
    await dir.unlink(lock).catch(() => undefined);
    throw err;
  }
}
