/**
 * Ownership records: a small JSON file beside each volume directory, in its parent, naming the claim
 * it was provisioned for. It lives outside the volume because the volume is handed to the workload,
 * which could otherwise forge it; Node.js has no xattr API, so a sibling file it is.
 */

import { constants } from 'node:fs';
import type { DirectoryHandle } from './directory-handle.ts';
import { errnoCode, SafeFsError } from './errors.ts';
import { temporaryMarkerName, volumeMarkerName } from './marker-names.ts';

/** Who a volume directory belongs to. */
export interface VolumeOwner {
  readonly claimUid: string;
  readonly namespace: string;
  readonly claimName: string;
  readonly pvName: string;
  /** The provisioner name (`PROVISIONER_NAME`) that created it. */
  readonly provisioner: string;
}

/** A stored ownership record. */
export interface OwnershipRecord extends VolumeOwner {
  /** ISO 8601 time the record was written. */
  readonly createdAt: string;
}

// O_NONBLOCK on open: a FIFO planted under the record name must not hang the provisioner.
const maxRecordBytes = 64 * 1024;
const ownerFields = ['claimUid', 'namespace', 'claimName', 'pvName', 'provisioner', 'createdAt'] as const;

function unreadable(dir: DirectoryHandle, leaf: string, detail: string): SafeFsError {
  return new SafeFsError({
    kind: 'ownership',
    path: dir.pathOf(volumeMarkerName(leaf)),
    operation: 'read ownership record',
    detail,
  });
}

/** Reads the record of volume `leaf` in `dir`; `undefined` when there is none. */
export async function readOwnershipRecord(
  dir: DirectoryHandle,
  leaf: string,
): Promise<OwnershipRecord | undefined> {
  const name = volumeMarkerName(leaf);
  let text: string;
  try {
    const handle = await dir.openFile(name, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw unreadable(dir, leaf, 'is not a regular file');
      if (stats.size > maxRecordBytes) throw unreadable(dir, leaf, `is larger than ${maxRecordBytes} bytes`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw unreadable(dir, leaf, 'is a symbolic link, refusing to follow it');
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw unreadable(dir, leaf, 'is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw unreadable(dir, leaf, 'is not a JSON object');
  const record = parsed as Record<string, unknown>;
  for (const field of ownerFields) {
    if (typeof record[field] !== 'string') throw unreadable(dir, leaf, `lacks the string field "${field}"`);
  }
  return Object.fromEntries(ownerFields.map((field) => [field, record[field]])) as unknown as OwnershipRecord;
}

/**
 * Publishes `record` for volume `leaf` in `dir` atomically: written under a temporary name first, so
 * readers never see a partial record. With `replace` false an existing record is never overwritten
 * (the call fails with `EEXIST`), which makes creation race-free between two provisioners.
 */
export async function writeOwnershipRecord(
  dir: DirectoryHandle,
  leaf: string,
  record: OwnershipRecord,
  replace: boolean,
): Promise<void> {
  const temporary = temporaryMarkerName();
  const handle = await dir.openFile(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
    0o600,
  );
  try {
    try {
      await handle.writeFile(`${JSON.stringify(record, [...ownerFields], 2)}\n`);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    if (replace) {
      await dir.rename(temporary, volumeMarkerName(leaf));
    } else {
      await dir.link(temporary, volumeMarkerName(leaf));
    }
  } finally {
    await dir.unlink(temporary).catch(() => undefined);
  }
}
