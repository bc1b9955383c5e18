/**
 * A directory tree as comparable data, to check that a copy equals its source: every entry with its
 * type, content (a digest) or link text, mode, owner if asked, and the first path of its inode, so
 * hard links show. Enters only real directories: `readdir`'s `recursive` follows links.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Options of {@link treeSnapshot}. */
export interface TreeSnapshotOptions {
  /** Include each entry's `uid:gid`. Default true. */
  readonly owners?: boolean;
}

/** Relative paths below `dir`, sorted, entering only real directories. */
async function entries(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    found.push(relative);
    if (entry.isDirectory()) found.push(...(await entries(dir, relative)));
  }
  return found.sort();
}

/** Every entry below `dir`, by relative path; see the module comment. */
export async function treeSnapshot(
  dir: string,
  options: TreeSnapshotOptions = {},
): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const inodes = new Map<number, string>();
  for (const entry of await entries(dir)) {
    const path = join(dir, entry);
    const stats = await lstat(path);
    const owner = options.owners === false ? '' : ` ${stats.uid}:${stats.gid}`;
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) result[entry] = `link ${await readlink(path)}${owner}`;
    else if (stats.isDirectory()) result[entry] = `dir ${mode}${owner}`;
    else {
      const digest = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      const first = inodes.get(stats.ino) ?? entry;
      inodes.set(stats.ino, first);
      result[entry] = `file ${digest} ${mode}${owner} same-as ${first}`;
    }
  }
  return result;
}
