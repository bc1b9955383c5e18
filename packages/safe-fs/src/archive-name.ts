/**
 * Names for archived volume directories. An archive stays in the volume's own parent, so the relative
 * layout is kept as is (`ns1/data` → `ns1/archived-data-pvc-…`), and the plain top-level case of
 * nfs-client (`<ns>-<pvc>-<pv>` → `archived-<ns>-<pvc>-<pv>`) is unchanged.
 */

import { maxLeafBytes } from './marker-names.ts';

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
 * `archived-<leaf>` when the leaf already contains the PV name, else `archived-<leaf>-<pvName>`, so
 * names are unique per PV; `-<attempt>` is appended from the second attempt on. A long leaf is
 * shortened (never the PV name) so the name and its ownership record fit the 255-byte limit.
 */
export function archiveCandidate(leaf: string, pvName: string, attempt: number): string {
  const counter = attempt > 1 ? `-${attempt}` : '';
  const plain = `archived-${leaf}${counter}`;
  if (leaf.includes(pvName) && Buffer.byteLength(plain) <= maxLeafBytes) return plain;
  const suffix = `-${pvName}${counter}`;
  const room = maxLeafBytes - Buffer.byteLength(`archived-${suffix}`);
  return `archived-${truncateToBytes(leaf, room)}${suffix}`;
}
