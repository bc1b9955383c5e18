/**
 * What the chaos suite reads and writes directly on a target's root, beside the provisioner: trees
 * of files in volumes, their digests, the ownership records kept next to volumes and the reserved
 * copy directories of clones in progress (their names as the nfs-subdir README documents them; the
 * hostpath provisioner names them the same way, through the same directory layer).
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { forEachLimited } from './claim-fleet.ts';

/** The fields of an ownership record the chaos phases judge. */
export interface RecordTimes {
  readonly pvName?: string;
  readonly archivedAt?: string;
  readonly expiresAt?: string;
}

const reservedToken = '.kube-provisioner';
const filesPerDirectory = 100;

/** Writes `count` small files below `dir`, a hundred per subdirectory, each naming `tag` and its index. */
export async function writeTree(dir: string, count: number, tag: string): Promise<void> {
  const subdirs = Math.ceil(count / filesPerDirectory);
  for (let d = 0; d < subdirs; d++) await mkdir(join(dir, `d${d}`), { recursive: true });
  const indexes = Array.from({ length: count }, (_, i) => i);
  await forEachLimited(indexes, (i) =>
    writeFile(join(dir, `d${Math.floor(i / filesPerDirectory)}`, `f${i}.txt`), `${tag}:${i}\n`),
  );
}

/** Every entry below `dir` by relative path: a file's SHA-256, `dir/` for a directory, `link` for others. */
export async function treeDigest(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const digest = new Map<string, string>();
  await forEachLimited(entries, async (entry) => {
    const path = join(entry.parentPath, entry.name);
    const key = relative(dir, path);
    if (entry.isDirectory()) digest.set(key, 'dir/');
    else if (!entry.isFile()) digest.set(key, 'other');
    else
      digest.set(
        key,
        createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      );
  });
  return digest;
}

/** How two digests differ: paths missing from `copy`, extra in it, or with other content. */
export function digestDifferences(source: Map<string, string>, copy: Map<string, string>): string[] {
  const differences: string[] = [];
  for (const [path, hash] of source) {
    const copied = copy.get(path);
    if (copied === undefined) differences.push(`${path} missing`);
    else if (copied !== hash) differences.push(`${path} differs`);
  }
  for (const path of copy.keys()) if (!source.has(path)) differences.push(`${path} extra`);
  return differences;
}

/** The ownership record kept beside volume directory `dir`, or `undefined` when there is none. */
export async function readRecord(dir: string): Promise<RecordTimes | undefined> {
  const path = join(dirname(dir), `.${basename(dir)}${reservedToken}.json`);
  // A record is a symbolic link whose target is the JSON; records of older versions are files.
  const text = await readlink(path).catch((err: NodeJS.ErrnoException) =>
    err.code === 'EINVAL' ? readFile(path, 'utf8') : undefined,
  );
  return text === undefined ? undefined : (JSON.parse(text) as RecordTimes);
}

/** The reserved directories of clone copies in progress (or left behind) directly below `root`. */
export async function clonesInProgress(root: string): Promise<string[]> {
  const names = await readdir(root);
  return names.filter((name) => name.endsWith(`${reservedToken}.copy`));
}
