/**
 * What the chaos suite reads of a root's snapshot area, beside the provisioner: the directory of a
 * `DirectorySnapshot`'s data (`.kube-provisioner-snapshots/<namespace>/<snapshot UID>`, as the
 * hostpath reference documents it), the copies in progress there, and whatever is there besides
 * finished snapshots and their records.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

const areaName = '.kube-provisioner-snapshots';
const reservedToken = '.kube-provisioner';

/** The directory of the data of the snapshot of UID `uid` in `namespace`. */
export function snapshotDataDir(root: string, namespace: string, uid: string): string {
  return join(root, areaName, namespace, uid);
}

/** The names in `namespace`'s directory of the snapshot area; none while it does not exist. */
async function namesIn(root: string, namespace: string): Promise<string[]> {
  return readdir(join(root, areaName, namespace)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
}

/** The reserved directory the copy of the snapshot of UID `uid` is made in, beside its data. */
export function snapshotCopyName(uid: string): string {
  return `.${uid}${reservedToken}.copy`;
}

/** The reserved copy directories of snapshots being taken (or left half-taken) in `namespace`. */
export async function snapshotCopiesInProgress(root: string, namespace: string): Promise<string[]> {
  return (await namesIn(root, namespace)).filter((name) => name.endsWith(`${reservedToken}.copy`));
}

/**
 * The names among `names` (one namespace's directory of the area) that are neither the data of a
 * snapshot of `uids`, nor its ownership record (`.<uid>.kube-provisioner.json`), nor the marker of
 * the directory made as a parent: copies, temporary records, data of snapshots that should be gone.
 */
export function unexpectedSnapshotEntries(names: readonly string[], uids: readonly string[]): string[] {
  const marker = `${reservedToken}-parent.json`;
  const expected = new Set([marker, ...uids.flatMap((uid) => [uid, `.${uid}${reservedToken}.json`])]);
  return names.filter((name) => !expected.has(name)).sort();
}

/** What `namespace`'s directory of the area holds besides the snapshots of `uids` and their records. */
export async function snapshotLeftovers(
  root: string,
  namespace: string,
  uids: readonly string[],
): Promise<string[]> {
  return unexpectedSnapshotEntries(await namesIn(root, namespace), uids);
}
