/**
 * The directories a clone's copy is inside, from its top down to the one it is copying: pairs of a
 * source directory and the target directory it is copied into, kept on an explicit stack so that
 * neither the width nor the depth of a tree a workload built makes the copy hold more than a bounded
 * state.
 *
 * Each source level is listed in batches ({@link listingBatch} names), and each batch is `lstat`ed
 * several names at once through the copy's task pool; only the batch being copied is held. The
 * deepest {@link maxOpenLevels} pairs keep their descriptors (source, its listing, target) and their
 * batch; a pair above them keeps only the two identities, its name and how far its listing got, and is
 * closed once the tasks still using its descriptors have settled. Climbing back, a closed pair is
 * reopened through `..` of its child on both sides and each checked to be the same directory (device
 * and inode), so a source subtree moved elsewhere meanwhile is never copied from outside the volume;
 * the reopened listing skips the names it had read. A listing changing meanwhile may then show a
 * name again or miss one, as any listing of a changing directory may (`readdir(3)`): the copy of a
 * live volume is not a snapshot. Every step costs O(1): no level is searched, whatever the depth.
 */

import type { Stats } from 'node:fs';
import type { BoundedTasks, TaskGroup } from './bounded-tasks.ts';
import type { DirectoryHandle, EntryName, Identity } from './directory-handle.ts';
import { type DirectoryStream, listingBatch } from './directory-stream.ts';
import { maxOpenLevels, nextListed } from './open-levels.ts';
import { reopenParent } from './reopen-parent.ts';

/** A listed name and what `lstat` found there; `stats` is `undefined` when the name had vanished. */
export interface ListedEntry {
  readonly name: EntryName;
  readonly stats: Stats | undefined;
}

interface Level {
  /** `undefined` while closed for depth, as are {@link target} and {@link stream}. */
  source: DirectoryHandle | undefined;
  target: DirectoryHandle | undefined;
  stream: DirectoryStream | undefined;
  /** The tasks using this level's descriptors; `undefined` while closed. */
  group: TaskGroup | undefined;
  // Numbers, not two objects: a closed level costs what these fields do, times the depth.
  readonly sourceDev: number;
  readonly sourceIno: number;
  readonly targetDev: number;
  readonly targetIno: number;
  /** Its name in the level above; unused for the top. */
  readonly name: EntryName;
  batch: readonly ListedEntry[];
  /** Index of the next entry of {@link batch} to hand out. */
  next: number;
  /** Whether {@link batch} is the listing's last. */
  ended: boolean;
  /** Names of the listing handed out so far, across reopens. */
  read: number;
  /** Names still to skip after a reopen. */
  skip: number;
}

const noEntries: readonly ListedEntry[] = [];

/**
 * The stack of a copy from `source` into `target` (both left open when it closes): each level's
 * directories, its listing and the group of tasks using its descriptors.
 */
export class CopyLevels {
  readonly #levels: Level[];
  readonly #tasks: BoundedTasks;
  /** Levels from here down are open; the top always is. */
  #firstOpen = 1;

  private constructor(top: Level, tasks: BoundedTasks) {
    this.#levels = [top];
    this.#tasks = tasks;
    top.group = tasks.group();
  }

  /** The stack of a copy of the open `source` into the open `target`, through `tasks`. */
  static async of(
    source: DirectoryHandle,
    target: DirectoryHandle,
    tasks: BoundedTasks,
  ): Promise<CopyLevels> {
    const [from, to] = await Promise.all([source.stat(), target.stat()]);
    return new CopyLevels(newLevel(source, target, from, to, ''), tasks);
  }

  /** Levels below the top: 0 while the copy is in the top itself. */
  get depth(): number {
    return this.#levels.length - 1;
  }

  /** The deepest level's source directory. */
  get source(): DirectoryHandle {
    return opened(this.#deepest().source);
  }

  /** The deepest level's target directory. */
  get target(): DirectoryHandle {
    return opened(this.#deepest().target);
  }

  /** The group of tasks using the deepest level's descriptors: a task started here may use them. */
  get group(): TaskGroup {
    return opened(this.#deepest().group);
  }

  /** The next entry of the deepest level's listing; `undefined` once it is done. */
  async next(): Promise<ListedEntry | undefined> {
    const level = this.#deepest();
    return nextListed(
      level,
      () => this.#readBatch(level),
      () => closeStream(level),
    );
  }

  /** Resolves once every task started in the deepest level has finished; throws the pool's failure. */
  async settle(): Promise<void> {
    await this.#deepest().group?.settled();
    this.#tasks.throwIfFailed();
  }

  /**
   * Goes down into `source`, just opened as `name` of the deepest level, copied into `target`, just
   * made and opened there (both closed here if that fails); closes the shallowest open level beyond
   * {@link maxOpenLevels}, once the tasks using it have settled.
   */
  async enter(name: EntryName, source: DirectoryHandle, target: DirectoryHandle): Promise<void> {
    let level: Level;
    try {
      const [from, to] = await Promise.all([source.stat(), target.stat()]);
      level = newLevel(source, target, from, to, name);
    } catch (err) {
      await Promise.all([source.close(), target.close()]);
      throw err;
    }
    level.group = this.#tasks.group();
    this.#levels.push(level);
    if (this.#levels.length - this.#firstOpen + 1 <= maxOpenLevels) return;
    const shallowest = this.#levels[this.#firstOpen] as Level;
    this.#firstOpen++;
    await closeLevel(shallowest);
  }

  /**
   * Leaves the deepest level, whose tasks have settled ({@link settle}), reopening the level above
   * when it was closed.
   */
  async leave(): Promise<void> {
    const level = this.#levels.pop();
    const parent = this.#levels[this.#levels.length - 1];
    if (level === undefined || parent === undefined) throw new Error('the top cannot be left');
    try {
      if (parent.source === undefined && level.source !== undefined && level.target !== undefined) {
        const [source, target] = [
          { dev: parent.sourceDev, ino: parent.sourceIno },
          { dev: parent.targetDev, ino: parent.targetIno },
        ];
        parent.source = await reopenParent(source, level.source, {
          operation: 'copy',
          detail: 'was moved while being copied; will copy again',
        });
        parent.target = await reopenParent(target, level.target, {
          operation: 'copy',
          detail: 'was moved while being copied into',
        });
        parent.group = this.#tasks.group();
        this.#firstOpen = this.#levels.length - 1;
      }
    } finally {
      await closeLevel(level);
    }
  }

  /**
   * Waits for every task still using a level's descriptors, then closes every level but the top's
   * directories, which the caller opened.
   */
  async close(): Promise<void> {
    for (const level of this.#levels.slice(1).reverse()) await closeLevel(level);
    const top = this.#levels[0] as Level;
    await top.group?.settled();
    await closeStream(top);
  }

  #deepest(): Level {
    return this.#levels[this.#levels.length - 1] as Level;
  }

  /** Reads the next batch of names of `level` and `lstat`s them, several at once. */
  async #readBatch(level: Level): Promise<void> {
    const source = opened(level.source);
    level.stream ??= await source.stream(listingBatch);
    const names = await level.stream.read();
    level.ended = names.length < listingBatch;
    // Names read before the level was closed are not handed out again.
    const skipped = Math.min(level.skip, names.length);
    level.skip -= skipped;
    level.batch = noEntries;
    level.next = 0;
    const batch = names.slice(skipped).map((name): ListedEntry => ({ name, stats: undefined }));
    const group = this.#tasks.group();
    try {
      for (const [index, entry] of batch.entries()) {
        await group.start(async () => {
          batch[index] = { name: entry.name, stats: await source.lstat(entry.name) };
        });
      }
    } finally {
      await group.settled();
    }
    this.#tasks.throwIfFailed();
    level.batch = batch;
  }
}

function opened<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the deepest level is not open');
  return value;
}

function newLevel(
  source: DirectoryHandle,
  target: DirectoryHandle,
  sourceIdentity: Identity,
  targetIdentity: Identity,
  name: EntryName,
): Level {
  return {
    source,
    target,
    stream: undefined,
    group: undefined,
    sourceDev: sourceIdentity.dev,
    sourceIno: sourceIdentity.ino,
    targetDev: targetIdentity.dev,
    targetIno: targetIdentity.ino,
    name,
    batch: noEntries,
    next: 0,
    ended: false,
    read: 0,
    skip: 0,
  };
}

async function closeStream(level: Level): Promise<void> {
  const { stream } = level;
  level.stream = undefined;
  await stream?.close();
}

/**
 * Closes `level`'s descriptors once the tasks using them have settled (a descriptor closed early could
 * be reused by another open, and a late task would then name a different directory), and drops its
 * batch, keeping what reopening it needs.
 */
async function closeLevel(level: Level): Promise<void> {
  const { source, target, group } = level;
  level.source = undefined;
  level.target = undefined;
  level.group = undefined;
  level.batch = noEntries;
  level.next = 0;
  level.ended = false;
  level.skip = level.read;
  await group?.settled();
  try {
    await closeStream(level);
  } finally {
    await Promise.all([source?.close(), target?.close()]);
  }
}
