/**
 * Ownership records: a small JSON file beside each volume directory, in its parent, naming the claim
 * it was provisioned for. It lives outside the volume because the volume is handed to the workload,
 * which could otherwise forge it; Node.js has no xattr API, so a sibling file it is.
 */

import { constants } from 'node:fs';
import type { DirectoryHandle } from './directory-handle.ts';
import { errnoCode, SafeFsError } from './errors.ts';
import { hasHashedRecordName, recordName, temporaryRecordName } from './reserved-names.ts';
import { holdTemporaryName } from './temporary-files.ts';

/** Who a volume directory belongs to. */
export interface VolumeOwner {
  readonly claimUid: string;
  readonly namespace: string;
  readonly claimName: string;
  readonly pvName: string;
  /** The provisioner name (`PROVISIONER_NAME`) that created it. */
  readonly provisioner: string;
  /**
   * The file-system quota project of the volume's tree, where its size is enforced. Recorded before
   * the directory is made a project, so a project ID on the root without a record is a leftover.
   */
  readonly projectId?: number | undefined;
}

/** A stored ownership record. */
export interface OwnershipRecord extends VolumeOwner {
  /** ISO 8601 time the record was written. */
  readonly createdAt: string;
  /**
   * ISO 8601 time the PV released the volume and kept its data (`onDelete: retain`); absent while
   * the volume is in use. A released record still names the old claim and PV, for audit, and may be
   * replaced by an adopting claim of the same namespace.
   */
  readonly releasedAt?: string | undefined;
  /**
   * The volume directory's name, stored when the record has a hashed name (leaves longer than 232
   * bytes) so the record can be checked against its directory.
   */
  readonly volume?: string | undefined;
  /**
   * ISO 8601 time a delete or archive of the volume began. A record without its directory is only
   * dropped when this says the directory was removed by this package (a crash before the record
   * went), not when the directory was merely moved away.
   */
  readonly removingAt?: string | undefined;
  /** ISO 8601 time the volume was archived; set on the archive's record only. */
  readonly archivedAt?: string | undefined;
  /**
   * ISO 8601 time after which the archive may be removed ({@link VolumeRoot.removeExpiredArchives});
   * absent: kept until removed by hand.
   */
  readonly expiresAt?: string | undefined;
  /**
   * The PV whose archived or retained data this volume took back ({@link VolumeRoot.takeBackVolume}).
   * On the old directory's record it says the data is being moved to the claim the record now names.
   * It speaks for the volume's live record only: once that volume is released or archived, its data
   * is its own PV's, to be taken back again under that PV's name.
   */
  readonly takenFrom?: string | undefined;
  /**
   * On the old directory's record while its data is being taken back: the record it replaced, put
   * back if the take-back cannot complete (see {@link VolumeRoot.takeBackVolume}).
   */
  readonly original?: OwnershipRecord | undefined;
}

// O_NONBLOCK on open: a FIFO planted under the record name must not hang the provisioner.
const maxRecordBytes = 64 * 1024;
const ownerFields = ['claimUid', 'namespace', 'claimName', 'pvName', 'provisioner', 'createdAt'] as const;
const optionalFields = [
  'releasedAt',
  'volume',
  'removingAt',
  'archivedAt',
  'expiresAt',
  'takenFrom',
] as const;
// Project IDs are 32-bit; 0 is "no project" and 2^32-1 is reserved by the kernel.
const numberFields = ['projectId'] as const;
const maxProjectId = 0xffff_fffe;
const nestedField = 'original';
const recordFields: readonly string[] = [...ownerFields, ...optionalFields, ...numberFields, nestedField];

function unreadable(dir: DirectoryHandle, name: string, detail: string): SafeFsError {
  return new SafeFsError({
    kind: 'ownership',
    path: dir.pathOf(name),
    operation: 'read ownership record',
    detail,
  });
}

/**
 * Reads the record of volume `leaf` in `dir` (or the record stored as `name` there, such as an
 * adoption lock); `undefined` when there is none.
 */
export async function readOwnershipRecord(
  dir: DirectoryHandle,
  leaf: string,
  name: string = recordName(leaf),
): Promise<OwnershipRecord | undefined> {
  let text: string;
  try {
    const handle = await dir.openExistingFile(name, constants.O_RDONLY | constants.O_NONBLOCK);
    if (handle === undefined) return undefined;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw unreadable(dir, name, 'is not a regular file');
      if (stats.size > maxRecordBytes) throw unreadable(dir, name, `is larger than ${maxRecordBytes} bytes`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') throw unreadable(dir, name, 'is a symbolic link, refusing to follow it');
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw unreadable(dir, name, 'is not valid JSON');
  }
  return recordFrom(parsed, leaf, (detail) => unreadable(dir, name, detail), true);
}

/** Checks a parsed record (with its {@link OwnershipRecord.original}, one level deep). */
function recordFrom(
  parsed: unknown,
  leaf: string,
  fail: (detail: string) => SafeFsError,
  nesting: boolean,
): OwnershipRecord {
  if (typeof parsed !== 'object' || parsed === null) throw fail('is not a JSON object');
  const record = parsed as Record<string, unknown>;
  for (const field of ownerFields) {
    if (typeof record[field] !== 'string') throw fail(`lacks the string field "${field}"`);
  }
  for (const field of optionalFields) {
    const value = record[field];
    if (value !== undefined && typeof value !== 'string') {
      throw fail(`has a "${field}" field that is not a string`);
    }
  }
  for (const field of numberFields) {
    const value = record[field];
    if (
      value !== undefined &&
      !(Number.isInteger(value) && Number(value) > 0 && Number(value) <= maxProjectId)
    ) {
      throw fail(`has a "${field}" field that is not an integer from 1 to ${maxProjectId}`);
    }
  }
  if (hasHashedRecordName(leaf) && record.volume !== leaf) {
    throw fail('names another directory (hashed record name collision)');
  }
  const fields = recordFields.filter((field) => field !== nestedField && record[field] !== undefined);
  const checked = Object.fromEntries(fields.map((field) => [field, record[field]]));
  const nested = record[nestedField];
  if (nested === undefined) return checked as unknown as OwnershipRecord;
  if (!nesting) throw fail(`has an "${nestedField}" field inside another`);
  const original = recordFrom(nested, leaf, (detail) => fail(`"${nestedField}" ${detail}`), false);
  return { ...checked, original } as unknown as OwnershipRecord;
}

/** `record` as stored for volume `leaf`: with its directory's name when the record name is hashed. */
function recordFor(leaf: string, record: OwnershipRecord): OwnershipRecord {
  const { volume: _previous, ...rest } = record;
  return hasHashedRecordName(leaf) ? { ...rest, volume: leaf } : rest;
}

/**
 * Publishes `record` for volume `leaf` in `dir` as file `name` (its record, or an adoption lock)
 * atomically: written under a temporary name first, so readers never see a partial record. With
 * `replace` false an existing file is never overwritten (the call fails with `EEXIST`), which makes
 * creation race-free between two provisioners. The temporary name is recognisable, so one left by a
 * crash is swept later (see `temporary-files.ts`).
 */
export async function writeOwnershipRecord(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord,
  replace: boolean,
  name: string = recordName(leaf),
): Promise<void> {
  const temporary = temporaryRecordName();
  const release = holdTemporaryName(temporary);
  try {
    await publish(dir, temporary, name, recordFor(leaf, record), replace);
  } finally {
    release();
  }
}

// No O_EXCL: the temporary name ends in a random UUID drawn just before, so no one else can have
// made or linked that name first, and an exclusive create costs NFSv4.1 a SETATTR after its OPEN.
const temporaryFlags = constants.O_WRONLY | constants.O_CREAT;

async function publish(
  dir: DirectoryHandle,
  temporary: string,
  name: string,
  record: OwnershipRecord,
  replace: boolean,
): Promise<void> {
  const handle = await dir.openFile(temporary, temporaryFlags, 0o600);
  // A rename takes the temporary name away itself; only a link or a failure leaves it to remove.
  let renamed = false;
  try {
    try {
      await handle.writeFile(`${JSON.stringify(record, [...recordFields], 2)}\n`);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    if (replace) {
      await dir.rename(temporary, name);
      renamed = true;
    } else {
      await dir.link(temporary, name);
    }
  } finally {
    if (!renamed) await dir.unlink(temporary).catch(() => undefined);
  }
}
