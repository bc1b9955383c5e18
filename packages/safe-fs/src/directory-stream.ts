/**
 * A directory listed in batches ({@link FsOps.opendir}) rather than read whole: a walk holds one
 * batch of names per level it is in, however many entries a directory has, so a workload that fills
 * a directory with millions of empty files cannot make the provisioner run out of memory.
 */

import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { systemError } from './errors.ts';
import type { FsDirectory } from './fs-ops.ts';

/** Names per batch: a few dozen KiB at most (255-byte names), and one thread-pool trip per batch. */
export const listingBatch = 256;

/** A name as listed: text when it is valid UTF-8, its raw bytes otherwise (see {@link EntryName}). */
export function entryName(raw: Buffer): EntryName {
  const text = raw.toString('utf8');
  return Buffer.from(text).equals(raw) ? text : raw;
}

/** An open listing of one directory, from {@link DirectoryHandle.stream}. */
export class DirectoryStream {
  /** Names per {@link read}. */
  readonly batchSize: number;
  readonly #listing: FsDirectory;
  readonly #path: string;

  constructor(listing: FsDirectory, path: string, batchSize: number) {
    this.#listing = listing;
    this.#path = path;
    this.batchSize = batchSize;
  }

  /** The next names: {@link batchSize} of them, fewer only when the listing is done. */
  async read(): Promise<EntryName[]> {
    try {
      return (await this.#listing.read()).map(entryName);
    } catch (err) {
      throw systemError(err, 'readdir', this.#path);
    }
  }

  close(): Promise<void> {
    return this.#listing.close();
  }
}

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
