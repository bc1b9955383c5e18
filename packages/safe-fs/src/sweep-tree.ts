/**
 * The start-up sweep: temporary record files can sit wherever records do, that is in the base and
 * in directories holding volumes. Volumes themselves hold workload data and are never entered.
 */

import { type DirectoryHandle, openBase } from './directory-handle.ts';
import { isReservedName, parentMarkerName, recordName } from './reserved-names.ts';
import { type SweepReport, sweepTemporaryFiles } from './temporary-files.ts';
import type { VolumeContext } from './volume-context.ts';

/** Whether `child` (not a volume) holds records or a parent marker of this package right inside it. */
async function holdsRecords(child: DirectoryHandle): Promise<boolean> {
  if ((await child.lstat(parentMarkerName)) !== undefined) return true;
  return (await child.readdir()).some((name) => typeof name === 'string' && isReservedName(name));
}

async function sweepDirectory(
  dir: DirectoryHandle,
  now: number,
  graceMs: number,
  report: { removed: string[]; kept: string[] },
): Promise<void> {
  const { removed, kept } = await sweepTemporaryFiles(dir, now, graceMs);
  report.removed.push(...removed);
  report.kept.push(...kept);
  for (const name of await dir.readdir()) {
    if (typeof name !== 'string' || isReservedName(name)) continue;
    if ((await dir.lstat(name))?.isDirectory() !== true) continue;
    if ((await dir.lstat(recordName(name))) !== undefined) continue;
    // `openDirectory` refuses a link swapped in after the lstat; nothing below it is swept then.
    const child = await dir.openDirectory(name).catch(() => undefined);
    if (child === undefined) continue;
    try {
      if (await holdsRecords(child)) await sweepDirectory(child, now, graceMs, report);
    } finally {
      await child.close();
    }
  }
}

/** Sweeps the whole tree of records below the base; see {@link VolumeRoot.sweepTemporaryFiles}. */
export async function sweepTree(context: VolumeContext, graceMs: number): Promise<SweepReport> {
  const report = { removed: [] as string[], kept: [] as string[] };
  const base = await openBase(context.fs, context.base);
  try {
    await sweepDirectory(base, context.now(), graceMs, report);
  } finally {
    await base.close();
  }
  return report;
}
