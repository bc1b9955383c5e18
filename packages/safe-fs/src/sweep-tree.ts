/**
 * The start-up sweep: temporary record files can sit wherever records do, that is in the base and
 * in directories holding volumes. Volumes themselves hold workload data and are never entered. A
 * directory without a record is entered when it holds records or a parent marker, which a tenant
 * can plant in its own unrecorded (upstream-era) volume: so every level is walked in batches with
 * an explicit stack (`parent-levels-walk.ts`), whatever its width or depth.
 */

import { type DirectoryHandle, type EntryName, openBase } from './directory-handle.ts';
import { findEntry } from './directory-listing.ts';
import { walkParentLevels } from './parent-levels-walk.ts';
import { isReservedName, parentMarkerName } from './reserved-names.ts';
import { type SweepReport, sweepTemporaryFile } from './temporary-files.ts';
import type { VolumeContext } from './volume-context.ts';

const isReserved = (name: EntryName) => typeof name === 'string' && isReservedName(name);

/** Whether `child` (not a volume) holds records or a parent marker of this package right inside it. */
async function holdsRecords(child: DirectoryHandle): Promise<boolean> {
  if ((await child.lstat(parentMarkerName)) !== undefined) return true;
  return (await findEntry(child, isReserved)) !== undefined;
}

/** Sweeps the whole tree of records below the base; see {@link VolumeRoot.sweepTemporaryFiles}. */
export async function sweepTree(context: VolumeContext, graceMs: number): Promise<SweepReport> {
  const report = { removed: [] as string[], kept: [] as string[] };
  const now = context.now();
  const base = await openBase(context.fs, context.base);
  try {
    await walkParentLevels(
      base,
      async ({ dir, recordInBatch, hasRecord }, name) => {
        await sweepTemporaryFile(dir, name, now, graceMs, report);
        if (isReservedName(name) || recordInBatch(name)) return undefined;
        if ((await dir.lstat(name))?.isDirectory() !== true || (await hasRecord(name))) return undefined;
        // `openDirectory` refuses a link swapped in after the lstat; nothing below it is swept then.
        const child = await dir.openDirectory(name).catch(() => undefined);
        if (child === undefined) return undefined;
        try {
          if (await holdsRecords(child)) return child;
        } catch (err) {
          await child.close();
          throw err;
        }
        await child.close();
        return undefined;
      },
      { operation: 'sweep', detail: 'was moved while being swept; will look again' },
    );
  } finally {
    await base.close();
  }
  return report;
}
