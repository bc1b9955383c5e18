/**
 * Names for archived volume directories: upstream's `archived-<leaf>` unless it is taken. An archive
 * stays in the volume's own parent, so the relative layout is kept as is (`ns1/data` →
 * `ns1/archived-data`, or `ns1/archived-data-pvc-…` beside an earlier archive), and nfs-client's
 * top-level `<ns>-<pvc>-<pv>` → `archived-<ns>-<pvc>-<pv>` is unchanged.
 */

import { maxLeafBytes } from './reserved-names.ts';

/** What every archive's name starts with. */
export const archivePrefix = 'archived-';

/** How many numbered variants are tried before giving up. */
export const maxArchiveAttempts = 100;

function truncateToBytes(text: string, bytes: number): string {
  let result = '';
  for (const character of text) {
    if (Buffer.byteLength(result + character) > bytes) break;
    result += character;
  }
  return result;
}

/**
 * The `attempt`-th candidate name (1-based) for archiving volume directory `leaf` of PV `pvName`:
 * first upstream's `archived-<leaf>`; when that is taken, `archived-<leaf>-<pvName>` (or
 * `archived-<leaf>-2` when the leaf already contains the PV name), then numbered variants. A long
 * leaf is shortened (never the PV name) so the name and its ownership record fit the 255-byte limit.
 */
export function archiveCandidate(leaf: string, pvName: string, attempt: number): string {
  const plain = `${archivePrefix}${leaf}`;
  const plainFits = Buffer.byteLength(plain) <= maxLeafBytes;
  if (plainFits && attempt === 1) return plain;
  const numbered = `${plain}-${attempt}`;
  if (leaf.includes(pvName) && Buffer.byteLength(numbered) <= maxLeafBytes) return numbered;
  const rank = plainFits ? attempt - 1 : attempt;
  const suffix = `-${pvName}${rank > 1 ? `-${rank}` : ''}`;
  const room = maxLeafBytes - Buffer.byteLength(`${archivePrefix}${suffix}`);
  return `${archivePrefix}${truncateToBytes(leaf, room)}${suffix}`;
}
