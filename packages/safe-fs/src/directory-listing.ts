/**
 * Looks at a directory's names without holding them all: in batches, the first wanted one, whether
 * there is any. Built on {@link DirectoryHandle.stream}.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import { listingBatch } from './directory-stream.ts';
import type { EntryName } from './entry-name.ts';

/**
 * The names of `dir`, one batch at a time; the listing is closed when the loop ends (`break` and
 * `throw` included).
 */
export async function* batchesOf(
  dir: DirectoryHandle,
  batchSize: number = listingBatch,
): AsyncGenerator<EntryName[]> {
  const stream = await dir.stream(batchSize);
  try {
    for (;;) {
      const names = await stream.read();
      if (names.length > 0) yield names;
      if (names.length < batchSize) return;
    }
  } finally {
    await stream.close();
  }
}

/**
 * All names of `dir` when it has fewer than `limit`, in one read; `undefined` when it has more (the
 * caller then streams it). A small directory costs what one `readdir` did.
 */
export async function listIfFewer(
  dir: DirectoryHandle,
  limit: number = listingBatch,
): Promise<EntryName[] | undefined> {
  const stream = await dir.stream(limit);
  try {
    const names = await stream.read();
    return names.length < limit ? names : undefined;
  } finally {
    await stream.close();
  }
}

/** The first name of `dir` that `wanted` accepts, read batch by batch; `undefined` when none is. */
export async function findEntry(
  dir: DirectoryHandle,
  wanted: (name: EntryName) => boolean,
): Promise<EntryName | undefined> {
  for await (const names of batchesOf(dir)) {
    const found = names.find(wanted);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether `dir` has no entries, found by reading at most one. */
export async function hasNoEntries(dir: DirectoryHandle): Promise<boolean> {
  return (await listIfFewer(dir, 1))?.length === 0;
}
