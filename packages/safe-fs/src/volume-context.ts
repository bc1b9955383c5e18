/**
 * What the operations of a {@link VolumeRoot} share: the system calls, the base, the clock and the
 * sweep of temporary record files that runs whenever a directory holding records is touched.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import type { FsOps } from './fs-ops.ts';
import type { OwnershipRecord, VolumeOwner } from './ownership-record.ts';

/** Internal to the package: passed from {@link VolumeRoot} to the modules implementing its calls. */
export interface VolumeContext {
  readonly fs: FsOps;
  /** The normalised absolute base path. */
  readonly base: string;
  /** Current time, epoch milliseconds. */
  now(): number;
  /**
   * Sweeps abandoned temporary record files from `dir`, the parent of a volume about to be worked
   * on. Best effort and throttled: it never fails the operation that touched `dir`.
   */
  touch(dir: DirectoryHandle): Promise<void>;
}

/** The ISO 8601 form of the context's current time, as records store it. */
export function timestampOf(context: VolumeContext): string {
  return new Date(context.now()).toISOString();
}

/** A fresh record for `owner`, created now. */
export function newRecord(context: VolumeContext, owner: VolumeOwner): OwnershipRecord {
  return { ...owner, createdAt: timestampOf(context) };
}
