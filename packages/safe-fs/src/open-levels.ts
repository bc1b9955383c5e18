/**
 * The directories a depth-first walk is inside, from its top down to the one it is reading: the
 * explicit stack of a walk (usage, removal, the searches before a removal), so that no walk recurses
 * or keeps more than a bounded state however wide or deep the tree a workload built.
 *
 * Each level is read as a listing in batches ({@link listingBatch} names), never whole. The deepest
 * {@link maxOpenLevels} levels keep their descriptors (the directory and its listing) and their
 * batch; a level above them keeps only its identity, its name and how many names it has read, and
 * is closed. Climbing back, a closed level is reopened through `..` of its child and checked to be
 * the same directory (device and inode), so a subtree moved elsewhere meanwhile is never followed out
 * of the volume; its listing then starts again, skipping the names already read (`resume`) or from
 * the beginning (`restart`, for a removal: what it read is gone). Every step costs O(1): no level is
 * searched, whatever the depth.
 */

import type { DirectoryHandle, EntryName, Identity } from './directory-handle.ts';
import { type DirectoryStream, listingBatch } from './directory-stream.ts';
import { reopenParent, type WalkStep } from './reopen-parent.ts';

/** Levels a walk holds open (two descriptors each, a directory and its listing), whatever the depth. */
export const maxOpenLevels = 32;

/** How a level closed for depth lists again once reopened: see the module comment. */
export type Relisting = 'resume' | 'restart';

/** How {@link OpenLevels} reads and reopens. */
export interface OpenLevelsOptions {
  readonly relisting: Relisting;
  /** The error's operation and detail when a closed level cannot be reopened as the same directory. */
  readonly moved: WalkStep;
  /** The top's first listing, just made by the caller; read instead of listing the top once. */
  readonly topListing?: readonly EntryName[] | undefined;
  /** Awaited before each batch is read (an I/O budget). */
  readonly beforeRead?: (() => Promise<void>) | undefined;
  /** Whether a failure to list a level ends its listing (counted by the caller) instead of the walk. */
  readonly listingRefused?: ((err: unknown) => boolean) | undefined;
  /** Sees every batch as it is read, before its names are handed out one by one. */
  readonly onBatch?: ((dir: DirectoryHandle, names: readonly EntryName[]) => void) | undefined;
}

interface Level<T> {
  /** `undefined` while closed for depth. */
  handle: DirectoryHandle | undefined;
  stream: DirectoryStream | undefined;
  readonly identity: Identity;
  /** Its name in the level above; unused for the top. */
  readonly name: EntryName;
  readonly state: T;
  batch: readonly EntryName[];
  /** Index of the next name of {@link batch} to hand out. */
  next: number;
  /** Whether {@link batch} is the listing's last. */
  ended: boolean;
  /** Names of the current listing handed out so far. */
  read: number;
  /** Names still to skip after a reopen (`resume`). */
  skip: number;
}

/**
 * The stack of a walk that started at `top` (left open when the walk closes). `T` is what the walk
 * keeps per level, besides its position.
 */
export class OpenLevels<T> {
  readonly #levels: Level<T>[];
  readonly #options: OpenLevelsOptions;
  /** Levels from here down are open; the top always is. */
  #firstOpen = 1;

  constructor(top: DirectoryHandle, identity: Identity, state: T, options: OpenLevelsOptions) {
    this.#options = options;
    const level = newLevel(top, identity, '', state);
    if (options.topListing !== undefined) {
      level.batch = options.topListing;
      level.ended = true;
    }
    this.#levels = [level];
  }

  /** Levels below the top: 0 while the walk reads the top itself. */
  get depth(): number {
    return this.#levels.length - 1;
  }

  /** The deepest level's directory. */
  get dir(): DirectoryHandle {
    const { handle } = this.#deepest();
    if (handle === undefined) throw new Error('the deepest level is not open');
    return handle;
  }

  /** What the walk keeps for the deepest level. */
  get state(): T {
    return this.#deepest().state;
  }

  /** The next name of the deepest level's listing; `undefined` when it is done. */
  async nextName(): Promise<EntryName | undefined> {
    const level = this.#deepest();
    return nextListed(
      level,
      () => this.#readBatch(level),
      () => closeStream(level),
    );
  }

  /** Lists the deepest level once more from its beginning (another pass of a removal). */
  relist(): void {
    const level = this.#deepest();
    level.batch = [];
    level.next = 0;
    level.ended = false;
    level.read = 0;
    level.skip = 0;
  }

  /**
   * Goes down into `child`, just opened as `name` of the deepest level (and closed here if that
   * fails); closes the shallowest open level beyond {@link maxOpenLevels}.
   */
  async enter(child: DirectoryHandle, name: EntryName, state: T): Promise<void> {
    let identity: Identity;
    try {
      // Only what reopening checks: a whole `Stats` kept per level doubled a deep walk's memory.
      const { dev, ino } = await child.stat();
      identity = { dev, ino };
    } catch (err) {
      await child.close();
      throw err;
    }
    this.#levels.push(newLevel(child, identity, name, state));
    if (this.#levels.length - this.#firstOpen + 1 <= maxOpenLevels) return;
    const shallowest = this.#levels[this.#firstOpen] as Level<T>;
    this.#firstOpen++;
    await closeLevel(shallowest, this.#options.relisting);
  }

  /**
   * Leaves the deepest level (its listing done or abandoned), reopening the level above when it
   * was closed; returns the name the left level has there.
   */
  async leave(): Promise<EntryName> {
    const level = this.#levels.pop();
    const parent = this.#levels[this.#levels.length - 1];
    if (level === undefined || parent === undefined) throw new Error('the top cannot be left');
    try {
      if (parent.handle === undefined && level.handle !== undefined) {
        parent.handle = await reopenParent(parent.identity, level.handle, this.#options.moved);
        this.#firstOpen = this.#levels.length - 1;
      }
    } finally {
      await closeLevel(level, 'restart');
    }
    return level.name;
  }

  /** Closes every level but the top's directory, which the caller opened. */
  async close(): Promise<void> {
    for (const level of this.#levels.slice(1).reverse()) await closeLevel(level, 'restart');
    await closeStream(this.#levels[0] as Level<T>);
  }

  #deepest(): Level<T> {
    return this.#levels[this.#levels.length - 1] as Level<T>;
  }

  async #readBatch(level: Level<T>): Promise<void> {
    const dir = level.handle;
    if (dir === undefined) throw new Error('the level is not open');
    let names: EntryName[];
    try {
      await this.#options.beforeRead?.();
      level.stream ??= await dir.stream(listingBatch);
      names = await level.stream.read();
    } catch (err) {
      if (this.#options.listingRefused?.(err) !== true) throw err;
      names = [];
    }
    level.ended = names.length < listingBatch;
    level.batch = names;
    // Names read before the level was closed are not handed out again.
    level.next = Math.min(level.skip, names.length);
    level.skip -= level.next;
    this.#options.onBatch?.(dir, names);
  }
}

function newLevel<T>(handle: DirectoryHandle, identity: Identity, name: EntryName, state: T): Level<T> {
  return {
    handle,
    stream: undefined,
    identity,
    name,
    state,
    batch: [],
    next: 0,
    ended: false,
    read: 0,
    skip: 0,
  };
}

async function closeStream(level: Level<unknown>): Promise<void> {
  const { stream } = level;
  level.stream = undefined;
  await stream?.close();
}

/** Closes `level`'s descriptors and drops its batch, keeping what reopening it needs. */
async function closeLevel(level: Level<unknown>, relisting: Relisting): Promise<void> {
  const { handle } = level;
  level.handle = undefined;
  level.batch = [];
  level.next = 0;
  level.ended = false;
  level.skip = relisting === 'resume' ? level.read : 0;
  if (relisting === 'restart') level.read = 0;
  try {
    await closeStream(level);
  } finally {
    await handle?.close();
  }
}

/** Where a level's listing stands: the batch in hand, the next item of it, and whether it is the last. */
export interface ListingPosition<E> {
  readonly batch: readonly E[];
  next: number;
  /** Items handed out so far. */
  read: number;
  readonly ended: boolean;
}

/**
 * The next item of a level's listing, reading another batch (`readBatch`) once the one in hand is
 * used up; `undefined`, after `done`, when the listing is over.
 */
export async function nextListed<E>(
  level: ListingPosition<E>,
  readBatch: () => Promise<void>,
  done: () => Promise<void>,
): Promise<E | undefined> {
  for (;;) {
    if (level.next < level.batch.length) {
      level.read++;
      return level.batch[level.next++];
    }
    if (level.ended) {
      await done();
      return undefined;
    }
    await readBatch();
  }
}
