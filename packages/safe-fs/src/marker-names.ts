/**
 * Names of the bookkeeping files this package keeps next to volumes. They are reserved: no volume
 * path may use them, so a claim can never create, replace or hide another volume's record.
 */

const reservedToken = '.kube-provisioner';
const volumeMarkerSuffix = `${reservedToken}.json`;
// As long as the record's suffix, so every leaf that fits a record fits its lock.
const adoptionLockSuffix = `${reservedToken}.lock`;

/** Name of the file, inside a directory this package created as a parent, that records it did so. */
export const parentMarkerName: string = `${reservedToken}-parent.json`;

/** Bytes a volume's leaf name may use so that its sibling ownership record still fits in 255 bytes. */
export const maxLeafBytes: number = 255 - Buffer.byteLength(`.${volumeMarkerSuffix}`);

/** Name of the ownership record of the volume directory `leaf`, kept beside it in the same parent. */
export function volumeMarkerName(leaf: string): string {
  return `.${leaf}${volumeMarkerSuffix}`;
}

/**
 * Name of the lock, beside volume `leaf`, held while a released record is replaced by an adopting
 * claim's: it holds that claim's record, so a crashed attempt is recognised by its own retry.
 */
export function adoptionLockName(leaf: string): string {
  return `.${leaf}${adoptionLockSuffix}`;
}

/** Name for a not-yet-published record; unique per call. */
export function temporaryMarkerName(): string {
  return `${reservedToken}.tmp.${crypto.randomUUID()}`;
}

/** Whether a path segment collides with the bookkeeping names. */
export function isReservedName(segment: string): boolean {
  return segment.startsWith('.') && segment.includes(reservedToken);
}
