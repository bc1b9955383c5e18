/**
 * Ownership records: a small JSON text beside each volume directory, in its parent, naming the claim
 * it was provisioned for. It lives outside the volume because the volume is handed to the workload,
 * which could otherwise forge it; Node.js has no xattr API, so a sibling entry it is.
 *
 * A record is stored as the text of a symbolic link (never followed: it names no path): `symlink(2)`
 * creates the entry with its whole text in one call, atomically and failing on an existing name, so
 * a reader or a crash sees no record or a complete one, with no temporary file to write, flush, link
 * and remove (over NFS one SYMLINK against nine operations). Records written as regular files (before
 * this format, or where symbolic links are refused) are still read, and replaced in this format by
 * the next change of the record.
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
  const text = await readRecordText(dir, name);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw unreadable(dir, name, 'is not valid JSON');
  }
  return recordFrom(parsed, leaf, (detail) => unreadable(dir, name, detail), true);
}

/** The text of record `name`: a symbolic link's, else a regular file's (the older format). */
async function readRecordText(dir: DirectoryHandle, name: string): Promise<string | undefined> {
  try {
    return await dir.readLink(name);
  } catch (err) {
    if (errnoCode(err) !== 'EINVAL') throw err;
  }
  return readRecordFile(dir, name);
}

async function readRecordFile(dir: DirectoryHandle, name: string): Promise<string | undefined> {
  try {
    const handle = await dir.openExistingFile(name, constants.O_RDONLY | constants.O_NONBLOCK);
    if (handle === undefined) return undefined;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw unreadable(dir, name, 'is not a regular file');
      if (stats.size > maxRecordBytes) throw unreadable(dir, name, `is larger than ${maxRecordBytes} bytes`);
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    // Read as a link a moment ago: swapped since, so neither format.
    if (errnoCode(err) === 'ELOOP') throw unreadable(dir, name, 'was replaced while being read');
    throw err;
  }
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
 * Publishes `record` for volume `leaf` in `dir` as entry `name` (its record, or an adoption lock)
 * atomically, so readers never see a partial record. With `replace` false an existing entry is never
 * overwritten (the call fails with `EEXIST`), which makes creation race-free between two
 * provisioners; with `replace` true the record is made under a temporary name and renamed over the
 * old one. A temporary name is recognisable, so one left by a crash is swept later (see
 * `temporary-files.ts`).
 */
export async function writeOwnershipRecord(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord,
  replace: boolean,
  name: string = recordName(leaf),
): Promise<void> {
  const text = JSON.stringify(recordFor(leaf, record), [...recordFields]);
  if (!replace) {
    try {
      await dir.symlink(text, name);
      return;
    } catch (err) {
      if (!symlinkRefused(err)) throw err;
    }
  }
  const temporary = temporaryRecordName();
  const release = holdTemporaryName(temporary);
  try {
    await publish(dir, temporary, name, text, replace);
  } finally {
    release();
  }
}

// What a file system without symbolic links, or with a shorter limit on their text, answers: the
// record is then written as a regular file, the older format, which every reader still reads.
const symlinkRefusals = new Set(['EPERM', 'EOPNOTSUPP', 'ENOTSUP', 'ENOSYS', 'ENAMETOOLONG']);

function symlinkRefused(err: unknown): boolean {
  return symlinkRefusals.has(errnoCode(err) ?? '');
}

// No O_EXCL: the temporary name ends in a random UUID drawn just before, so no one else can have
// made or linked that name first, and an exclusive create costs NFSv4.1 a SETATTR after its OPEN.
const temporaryFlags = constants.O_WRONLY | constants.O_CREAT;

/** Makes `temporary` hold `text`: a symbolic link, or a flushed regular file where links are refused. */
async function makeTemporary(dir: DirectoryHandle, temporary: string, text: string): Promise<void> {
  try {
    await dir.symlink(text, temporary);
    return;
  } catch (err) {
    if (!symlinkRefused(err)) throw err;
  }
  const handle = await dir.openFile(temporary, temporaryFlags, 0o600);
  try {
    await handle.writeFile(`${text}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

async function publish(
  dir: DirectoryHandle,
  temporary: string,
  name: string,
  text: string,
  replace: boolean,
): Promise<void> {
  // A rename takes the temporary name away itself; only a link or a failure leaves it to remove.
  let renamed = false;
  try {
    await makeTemporary(dir, temporary, text);
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
