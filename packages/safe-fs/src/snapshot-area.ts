/**
 * The snapshot area: a reserved directory at the top of a root that holds snapshots of volumes,
 * each recorded like a volume (so deletes check their record, and crashes leave nothing unowned).
 * Its name is reserved, so no volume path (a rendered pattern, a PV's stored path) can ever name it
 * or anything below it, and no snapshot is ever visible inside a volume.
 */

import { SafeFsError } from './errors.ts';
import {
  parseRelativeVolumePath,
  type RelativeVolumePath,
  relativePathProblem,
} from './relative-volume-path.ts';

/** The directory, directly below the base, that holds the snapshots. */
export const snapshotAreaName = '.kube-provisioner-snapshots';

const areaPrefix = `${snapshotAreaName}/`;

/**
 * The path below the base of the snapshot with object UID `uid` of namespace `namespace`:
 * `.kube-provisioner-snapshots/<namespace>/<uid>` (the UID, not the name, so that a snapshot deleted
 * and made again under the same name never meets the old one's data, and the name's length never matters).
 *
 * @throws {@link SafeFsError} `invalid-path` when `namespace/uid` is no valid relative path.
 */
export function snapshotPath(namespace: string, uid: string): RelativeVolumePath {
  return `${areaPrefix}${parseRelativeVolumePath(`${namespace}/${uid}`)}` as RelativeVolumePath;
}

/** Whether `path` lies in the snapshot area. */
export function isSnapshotPath(path: string): boolean {
  return path.startsWith(areaPrefix);
}

/**
 * Validates a path the package itself works on: a volume path of `parseRelativeVolumePath`, or a
 * snapshot path (the area, then at least two valid segments). The area's name is accepted here
 * only: the parsers of user input keep refusing it.
 *
 * @throws {@link SafeFsError} of kind `invalid-path` naming the reason.
 */
export function parseStoredPath(input: string): RelativeVolumePath {
  if (!isSnapshotPath(input)) return parseRelativeVolumePath(input);
  const rest = input.slice(areaPrefix.length);
  const problem = rest.includes('/') ? relativePathProblem(rest) : 'it names no snapshot below the area';
  if (problem !== undefined) {
    throw new SafeFsError({ kind: 'invalid-path', path: input, operation: 'validate path', detail: problem });
  }
  return input as RelativeVolumePath;
}
