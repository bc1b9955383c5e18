/**
 * The walk of the levels that hold volumes and their records (the base, parents, and whatever other
 * directories a search chooses to enter), for the searches that look at records rather than at data:
 * take-back's and retention's searches and the start-up sweep. What they enter may still be a
 * tenant's (an unrecorded upstream-era volume, a marker planted in one), so it is walked like data
 * (`open-levels.ts`): each level in batches, an explicit stack however deep, memory independent of
 * any directory's width.
 *
 * A volume's record sits beside it, but a listing in batches may hand the two out in different
 * batches: a record is looked for in its volume's batch, and by name (one `lstat`) only when that
 * batch is not the whole level.
 */

import type { DirectoryHandle, EntryName } from './directory-handle.ts';
import { listingBatch } from './directory-stream.ts';
import { OpenLevels } from './open-levels.ts';
import type { WalkStep } from './reopen-parent.ts';
import { recordName } from './reserved-names.ts';

/** The level a {@link LevelStep} is at. */
export interface ParentLevel {
  readonly dir: DirectoryHandle;
  /** 0 for the top, 1 for a directory in it, and so on. */
  readonly depth: number;
  /** Whether the record of volume `name` came in the same batch: then it exists, without a call. */
  recordInBatch(name: string): boolean;
  /** Whether the record of volume `name` of this level exists: {@link recordInBatch}, else looked up. */
  hasRecord(name: string): Promise<boolean>;
}

/**
 * Handles `name` of `level`: returns a directory to walk next (opened by the step, as a
 * subdirectory of `level.dir` named `name`), or `undefined` to go on with the level's next name.
 * Names that are not UTF-8 are never handed out: no record, marker or volume of this package has one.
 */
export type LevelStep = (level: ParentLevel, name: string) => Promise<DirectoryHandle | undefined>;

interface BatchState {
  /** Text names of the level's current batch. */
  names: ReadonlySet<string>;
  /** Whether that batch is the level's whole listing. */
  whole: boolean;
  batches: number;
}

/** Walks `top` (left open) depth first, each name through `step`; `moved` names the walk in errors. */
export async function walkParentLevels(
  top: DirectoryHandle,
  step: LevelStep,
  moved: WalkStep,
): Promise<void> {
  const newState = (): BatchState => ({ names: new Set(), whole: false, batches: 0 });
  const levels: OpenLevels<BatchState> = new OpenLevels(top, await top.stat(), newState(), {
    relisting: 'resume',
    moved,
    onBatch: (_dir, names) => {
      const state = levels.state;
      state.names = new Set(names.filter((name): name is string => typeof name === 'string'));
      // A level reopened after it was closed for depth lists again: then it is never taken as whole.
      state.whole = state.batches === 0 && names.length < listingBatch;
      state.batches++;
    },
  });
  const level: ParentLevel = {
    get dir() {
      return levels.dir;
    },
    get depth() {
      return levels.depth;
    },
    recordInBatch: (name) => levels.state.names.has(recordName(name)),
    hasRecord: async (name) =>
      level.recordInBatch(name) ||
      (!levels.state.whole && (await levels.dir.lstat(recordName(name))) !== undefined),
  };
  try {
    for (;;) {
      const name: EntryName | undefined = await levels.nextName();
      if (name === undefined) {
        if (levels.depth === 0) return;
        await levels.leave();
        continue;
      }
      if (typeof name !== 'string') continue;
      const child = await step(level, name);
      if (child !== undefined) await levels.enter(child, name, newState());
    }
  } finally {
    await levels.close();
  }
}
