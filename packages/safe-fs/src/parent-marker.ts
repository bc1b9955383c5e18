/**
 * How a directory this package made as a parent is recognised: the marker file inside it, and the
 * mode it has while it is being made or removed, when the marker is not there.
 */

import { constants, type Stats } from 'node:fs';
import type { DirectoryHandle } from './directory-handle.ts';
import { parentMarkerName } from './reserved-names.ts';

/**
 * The mode a parent directory has from its `mkdir` until its marker is written, and again from the
 * start of its removal: owner-only with the sticky bit, which no volume of this package ever has
 * (volumes are made `0700` and may not ask for this mode). So a directory is recognisably a parent
 * at every instant, by this mode or by its marker, and a concurrent create of a volume of the same
 * name never takes it for its own (see `docs/decisions/safe-fs.md`, "No nesting, whatever the timing").
 */
export const parentInProgressMode = 0o1700;

/** Whether `stats` shows a parent directory being made or removed (see {@link parentInProgressMode}). */
export function isParentInProgress(stats: Stats): boolean {
  return (stats.mode & 0o7777) === parentInProgressMode;
}

/** Writes the marker saying this package made `dir` as a parent; fails if one exists. */
export async function writeParentMarker(dir: DirectoryHandle, text: string): Promise<void> {
  const marker = await dir.openFile(
    parentMarkerName,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
    0o600,
  );
  try {
    await marker.writeFile(text);
  } finally {
    await marker.close();
  }
}

/** The text of the parent marker in `dir`; `undefined` when there is none. */
export async function readParentMarker(dir: DirectoryHandle): Promise<string | undefined> {
  const marker = await dir.openExistingFile(parentMarkerName, constants.O_RDONLY | constants.O_NONBLOCK);
  if (marker === undefined) return undefined;
  try {
    return await marker.readFile('utf8');
  } finally {
    await marker.close();
  }
}
