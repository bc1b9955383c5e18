/**
 * The reserved names: the files this package keeps next to volumes (records, their temporary files
 * and adoption locks, clone copies) and inside the parents it made (parent markers). No volume path
 * may use them, so a claim can never create, replace or hide another volume's record.
 */

import { createHash } from 'node:crypto';
import { writerTag } from './temporary-writer.ts';

const reservedToken = '.kube-provisioner';
const recordSuffix = `${reservedToken}.json`;
// As long as the record's suffix, so every leaf that fits a record fits its lock.
const adoptionLockSuffix = `${reservedToken}.lock`;
const maxNameBytes = 255;

/** Name of the file, inside a directory this package created as a parent, that records it did so. */
export const parentMarkerName: string = `${reservedToken}-parent.json`;

/**
 * Bytes a leaf may use for its record to be named after it (`.<leaf>.kube-provisioner.json`);
 * longer leaves get a hashed record name (see {@link recordName}). New archive names stay
 * within it, so archived records keep readable names.
 */
export const maxLeafBytes: number = maxNameBytes - Buffer.byteLength(`.${recordSuffix}`);

/** Whether `leaf` is too long for a record named after it. */
export function hasHashedRecordName(leaf: string): boolean {
  return Buffer.byteLength(leaf) > maxLeafBytes;
}

// `.kube-provisioner.sha256-<hex>` can never equal `.<leaf>.kube-provisioner…` of a short leaf: the
// part before the suffix would have to end in `kube-provisioner`, which is not hexadecimal.
function hashedName(leaf: string, extension: string): string {
  const digest = createHash('sha256').update(leaf).digest('hex');
  return `${reservedToken}.sha256-${digest}.${extension}`;
}

/**
 * Name of the ownership record of the volume directory `leaf`, kept beside it in the same parent:
 * `.<leaf>.kube-provisioner.json`, or `.kube-provisioner.sha256-<hash of leaf>.json` when that would
 * exceed 255 bytes (upstream names reach 255 bytes); the hashed record names its leaf inside.
 */
export function recordName(leaf: string): string {
  return hasHashedRecordName(leaf) ? hashedName(leaf, 'json') : `.${leaf}${recordSuffix}`;
}

/**
 * The volume directory named by record file `name`: its leaf; `hashed` for a hashed record name
 * (the record itself names its leaf); `undefined` when `name` is no volume's record.
 */
export function recordLeaf(name: string): string | 'hashed' | undefined {
  if (name.startsWith(`${reservedToken}.sha256-`) && name.endsWith('.json')) return 'hashed';
  if (!name.startsWith('.') || !name.endsWith(recordSuffix)) return undefined;
  const leaf = name.slice(1, -recordSuffix.length);
  return leaf !== '' && recordName(leaf) === name ? leaf : undefined;
}

/**
 * Name of the lock, beside volume `leaf`, held while a released record is replaced by an adopting
 * claim's: it holds that claim's record, so a crashed attempt is recognised by its own retry.
 */
export function adoptionLockName(leaf: string): string {
  return hasHashedRecordName(leaf) ? hashedName(leaf, 'lock') : `.${leaf}${adoptionLockSuffix}`;
}

/**
 * Name of the directory, beside volume `leaf`, into which a clone copies before it becomes the
 * volume: reserved, so nothing half-copied is ever taken for a volume, and a killed copy's leftover
 * is recognised by the retry.
 */
export function cloneTemporaryName(leaf: string): string {
  return hasHashedRecordName(leaf) ? hashedName(leaf, 'copy') : `.${leaf}${reservedToken}.copy`;
}

/**
 * Name of the directory, beside volume `leaf`, that a delete for PV `pvName` renames the volume to
 * before its record goes (see `remove-volume.ts`): `.kube-provisioner.sha256-<hash>.gone`, the hash
 * of both, so only that PV's retry takes a leftover for its own, whatever was made at `leaf` since.
 */
export function removalName(leaf: string, pvName: string): string {
  return hashedName(`${leaf}\0${pvName}`, 'gone');
}

/** Prefix of every not-yet-published record: recognisable, so leftovers of a crash can be swept. */
export const temporaryRecordPrefix: string = `${reservedToken}.tmp.`;

/**
 * Name for a not-yet-published record, unique per call: `.kube-provisioner.tmp.<writer>.<uuid>`,
 * where `<writer>` identifies the writing process (see `temporary-writer.ts`).
 */
export function temporaryRecordName(): string {
  return `${temporaryRecordPrefix}${writerTag()}.${crypto.randomUUID()}`;
}

/** The writer tag in temporary name `name` (empty for names without one). */
export function temporaryWriterTag(name: string): string {
  const rest = name.slice(temporaryRecordPrefix.length);
  const dot = rest.indexOf('.');
  return dot === -1 ? '' : rest.slice(0, dot);
}

/** Whether `name` is a temporary record name of {@link temporaryRecordName}. */
export function isTemporaryRecordName(name: string): boolean {
  return name.startsWith(temporaryRecordPrefix);
}

/**
 * Whether a path segment is a reserved name. Compared case-insensitively: on a case-insensitive
 * export `.X.KUBE-PROVISIONER.JSON` is the record of `x`.
 */
export function isReservedName(segment: string): boolean {
  return segment.startsWith('.') && segment.toLowerCase().includes(reservedToken);
}
