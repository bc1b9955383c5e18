/**
 * A directory listed in batches ({@link FsOps.opendir}) rather than read whole: a walk holds one
 * batch of names per level it is in, however many entries a directory has, so a workload that fills
 * a directory with millions of empty files cannot make the provisioner run out of memory.
 */

import { type EntryName, entryName } from './entry-name.ts';
import { systemError } from './errors.ts';
import type { FsDirectory } from './fs-ops.ts';

/** Names per batch: a few dozen KiB at most (255-byte names), and one thread-pool trip per batch. */
export const listingBatch = 256;

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
