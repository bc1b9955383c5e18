/**
 * Recursive removal of a directory's contents that never follows a link and tolerates a workload
 * still changing the tree: entries that vanish are skipped, entries swapped between `lstat` and use
 * are retried on the next pass.
 */

import type { DirectoryHandle } from './directory-handle.ts';
import { errnoCode } from './errors.ts';

// A pass removes everything it saw; another pass only matters if something appeared meanwhile.
const maxPasses = 3;

// Codes that mean "the entry changed under us"; the next pass sees its new state.
const raceCodes: ReadonlySet<string> = new Set([
  'ENOENT',
  'ENOTEMPTY',
  'EEXIST',
  'EISDIR',
  'ENOTDIR',
  'ELOOP',
]);

async function removeEntry(dir: DirectoryHandle, name: string): Promise<void> {
  const stats = await dir.lstat(name);
  if (stats === undefined) return;
  if (!stats.isDirectory()) {
    await dir.unlink(name);
    return;
  }
  // `openDirectory` refuses a symlink swapped in after the lstat; the next pass unlinks it.
  const child = await dir.openDirectory(name);
  if (child === undefined) return;
  try {
    await emptyDirectory(child);
  } finally {
    await child.close();
  }
  await dir.rmdir(name);
}

/** Removes everything inside `dir`, leaving `dir` itself in place. */
export async function emptyDirectory(dir: DirectoryHandle): Promise<void> {
  for (let pass = 1; ; pass++) {
    const names = await dir.readdir();
    if (names.length === 0) return;
    for (const name of names) {
      try {
        await removeEntry(dir, name);
      } catch (err) {
        const code = errnoCode(err);
        if (pass === maxPasses || code === undefined || !raceCodes.has(code)) throw err;
      }
    }
    if (pass === maxPasses) return;
  }
}
