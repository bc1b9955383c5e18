/**
 * A read-only walk of a volume root that finds the volumes in it and the provisioners' records and
 * parent markers beside them. Volume directories are recognised by their ownership record (safe-fs),
 * by being the path of a PV, or by an upstream-style name (`…pvc-<uid>`, `archived-…`); the walk never
 * enters one, so a workload's data is neither read nor traversed. Links are never followed.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  adoptionLockName,
  isReservedName,
  type OwnershipRecord,
  parentMarkerName,
  parseRelativeVolumePath,
  recordName,
  snapshotAreaName,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';

/** A directory the walk took for a volume. */
export interface ScannedVolume {
  /** Relative to the root. */
  readonly path: string;
  /** Its ownership record; `undefined` for unrecorded (upstream) volumes. */
  readonly record: OwnershipRecord | undefined;
}

/** A record, temporary record or adoption lock that belongs to no volume directory. */
export interface LeftoverFile {
  /** Relative to the root. */
  readonly path: string;
  /**
   * `temporary`: a record being written when its writer stopped; `record`/`lock`: the record or
   * adoption lock of a directory that is not there.
   */
  readonly kind: 'temporary' | 'record' | 'lock';
  /** Modification time, in ms since the epoch. */
  readonly modifiedAtMs: number;
}

/** Something the walk could not read; the audit reports it rather than guessing. */
export interface UnreadableEntry {
  readonly path: string;
  readonly error: string;
}

/** What {@link scanVolumeRoot} found. */
export interface VolumeScan {
  readonly volumes: readonly ScannedVolume[];
  readonly leftovers: readonly LeftoverFile[];
  readonly unreadable: readonly UnreadableEntry[];
}

/** Options of {@link scanVolumeRoot}. */
export interface ScanOptions {
  /** Volume paths that PVs name: such a directory is a volume even without a record. */
  readonly pvPaths: ReadonlySet<string>;
  /**
   * How deep the walk goes into directories that are neither volumes nor parents of a PV's path
   * nor marked as created parents. Default 4.
   */
  readonly maxDepth?: number;
}

// The default directory names of the upstream programs: nfs-subdir `<ns>-<pvc>-<pv>`, hostpath `<pv>`.
const upstreamVolumeName = /(?:^|-)pvc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u;
const archivedPrefix = 'archived-';

/** Whether `leaf` is named the way upstream provisioners and archives name volume directories. */
export function isUpstreamVolumeName(leaf: string): boolean {
  return upstreamVolumeName.test(leaf) || leaf.startsWith(archivedPrefix);
}

/** Whether the volume directory `path` is an archive (nfs `archived-…`). */
export function isArchivedPath(path: string): boolean {
  return (path.split('/').pop() ?? '').startsWith(archivedPrefix);
}

// Records end in `.json` and adoption locks in `.lock` whatever their leaf (long leaves get hashed
// names); a temporary record has neither until it is published.
function leftoverKind(name: string): LeftoverFile['kind'] {
  if (name.endsWith('.json')) return 'record';
  if (name.endsWith('.lock')) return 'lock';
  return 'temporary';
}

async function isCreatedParent(root: string, path: string): Promise<boolean> {
  return (await lstat(join(root, path, parentMarkerName)).catch(() => undefined)) !== undefined;
}

/** Walks `root` (the export or host root as mounted here) without writing anything. */
export async function scanVolumeRoot(root: string, options: ScanOptions): Promise<VolumeScan> {
  const volumeRoot = new VolumeRoot(root);
  const maxDepth = options.maxDepth ?? 4;
  const pvAncestors = new Set<string>();
  for (const path of options.pvPaths) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) pvAncestors.add(segments.slice(0, i).join('/'));
  }
  const volumes: ScannedVolume[] = [];
  const leftovers: LeftoverFile[] = [];
  const unreadable: UnreadableEntry[] = [];
  const at = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

  const readVolumeRecord = async (path: string): Promise<OwnershipRecord | undefined> => {
    try {
      return await volumeRoot.readRecord(parseRelativeVolumePath(path));
    } catch (err) {
      unreadable.push({ path, error: (err as Error).message });
      return undefined;
    }
  };

  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch (err) {
      unreadable.push({ path: dir === '' ? '.' : dir, error: (err as Error).message });
      return;
    }
    const names = new Set(entries.map((entry) => entry.name));
    // The base's snapshot area holds snapshots, not volumes: neither a volume nor a leftover.
    const claimed = new Set<string>(dir === '' ? [parentMarkerName, snapshotAreaName] : [parentMarkerName]);
    const descend: string[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || isReservedName(entry.name)) continue;
      const path = at(dir, entry.name);
      const recordFile = recordName(entry.name);
      claimed.add(recordFile).add(adoptionLockName(entry.name));
      if (names.has(recordFile)) {
        volumes.push({ path, record: await readVolumeRecord(path) });
      } else if (options.pvPaths.has(path) || isUpstreamVolumeName(entry.name)) {
        volumes.push({ path, record: undefined });
      } else if (pvAncestors.has(path) || depth < maxDepth || (await isCreatedParent(root, path))) {
        descend.push(path);
      }
    }
    for (const entry of entries) {
      if (!isReservedName(entry.name) || claimed.has(entry.name)) continue;
      const path = at(dir, entry.name);
      const stats = await lstat(join(root, path)).catch(() => undefined);
      if (stats === undefined) continue;
      leftovers.push({ path, kind: leftoverKind(entry.name), modifiedAtMs: stats.mtimeMs });
    }
    for (const path of descend) await walk(path, depth + 1);
  };

  await walk('', 0);
  return { volumes, leftovers, unreadable };
}
