/**
 * The snapshots in a root's snapshot area (hostpath's `DirectorySnapshot`s,
 * `.kube-provisioner-snapshots/<namespace>/<snapshot UID>`): each directory a provisioner recorded,
 * matched by UID to its `DirectorySnapshot` object, listed with its source claim and age. A directory
 * whose object is gone is an orphan (nothing restores or deletes it any more), unless its record says
 * it was kept on purpose (`deletionPolicy: Retain` marks it released). Reads only.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeApi } from '@kube-provisioner/controller';
import { isNotFound } from '@kube-provisioner/controller/client';
import { type DirectorySnapshot, directorySnapshots } from '@kube-provisioner/hostpath';
import {
  isReservedName,
  type OwnershipRecord,
  snapshotAreaName,
  snapshotPath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import { listAll } from './cluster-state.ts';
import type { Finding } from './findings.ts';

/**
 * Where a snapshot's data stands: `live`, its object exists; `retained`, its object was deleted with
 * `deletionPolicy: Retain`; `orphaned`, its object is gone and nothing said to keep the data.
 */
export type SnapshotState = 'live' | 'retained' | 'orphaned';

/** One snapshot directory of the audited provisioner. */
export interface SnapshotListing {
  /** The directory, relative to the root. */
  readonly path: string;
  readonly namespace: string;
  /** The `DirectorySnapshot`'s name, from its object, else from the record. */
  readonly name: string;
  readonly uid: string;
  /** The claim it is a snapshot of; known while its object exists. */
  readonly source?: string;
  /** Its `status.readyToUse`, while its object exists. */
  readonly readyToUse?: boolean;
  /** Seconds since its copy began (the record's `createdAt`). */
  readonly ageSeconds: number;
  readonly state: SnapshotState;
}

/** A snapshot directory and its record, as found in the area. */
interface ScannedSnapshot {
  readonly path: string;
  readonly namespace: string;
  readonly uid: string;
  readonly record: OwnershipRecord;
}

function unreadableFinding(path: string, err: unknown): Finding {
  return { kind: 'unreadable', pvs: [], path, message: `could not read ${path}: ${(err as Error).message}` };
}

async function directories(path: string): Promise<Dirent[]> {
  const entries = await readdir(path, { withFileTypes: true });
  // Records, locks and a copy's temporary directory have reserved names.
  return entries.filter((entry) => entry.isDirectory() && !isReservedName(entry.name));
}

/** The recorded snapshot directories of `provisionerName` under `root`; none when it has no snapshot area. */
async function scanSnapshotArea(
  root: string,
  provisionerName: string,
  unreadable: Finding[],
): Promise<ScannedSnapshot[]> {
  const volumeRoot = new VolumeRoot(root);
  const found: ScannedSnapshot[] = [];
  const namespaces = await directories(join(root, snapshotAreaName)).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      unreadable.push(unreadableFinding(snapshotAreaName, err));
    }
    return [];
  });
  for (const { name: namespace } of namespaces) {
    const dir = `${snapshotAreaName}/${namespace}`;
    let uids: Dirent[];
    try {
      uids = await directories(join(root, dir));
    } catch (err) {
      unreadable.push(unreadableFinding(dir, err));
      continue;
    }
    for (const { name: uid } of uids) {
      const path = `${dir}/${uid}`;
      try {
        const record = await volumeRoot.readRecord(snapshotPath(namespace, uid));
        if (record?.provisioner === provisionerName) found.push({ path, namespace, uid, record });
      } catch (err) {
        unreadable.push(unreadableFinding(path, err));
      }
    }
  }
  return found;
}

/** The listing and the orphans' findings of {@link listSnapshots}. */
export interface SnapshotAudit {
  /** Oldest first. */
  readonly snapshots: readonly SnapshotListing[];
  /** One `snapshot-without-object` finding per orphan, and what could not be read. */
  readonly findings: readonly Finding[];
}

/**
 * Lists the snapshots of `provisionerName` under `root` against the `DirectorySnapshot` objects.
 * The objects are read (`list`) only when the root has snapshots; a cluster without the CRD has none.
 */
export async function listSnapshots(
  api: KubeApi,
  root: string,
  provisionerName: string,
  nowMs: number,
  signal?: AbortSignal,
): Promise<SnapshotAudit> {
  const unreadable: Finding[] = [];
  const scanned = await scanSnapshotArea(root, provisionerName, unreadable);
  if (scanned.length === 0) return { snapshots: [], findings: unreadable };
  const objects = await listAll(api.resource(directorySnapshots), signal).catch((err: unknown) => {
    if (isNotFound(err)) return [] as DirectorySnapshot[];
    throw err;
  });
  const byUid = new Map(objects.map((object) => [object.metadata?.uid ?? '', object]));
  const snapshots = scanned.map(({ path, namespace, uid, record }): SnapshotListing => {
    const object = byUid.get(uid);
    const ageSeconds = Math.max(0, Math.floor((nowMs - Date.parse(record.createdAt)) / 1000));
    const common = { path, namespace, uid, ageSeconds };
    if (object === undefined) {
      const state = record.releasedAt === undefined ? 'orphaned' : 'retained';
      return { ...common, name: record.claimName, state };
    }
    const source = object.spec?.source?.persistentVolumeClaimName;
    const readyToUse = object.status?.readyToUse;
    return {
      ...common,
      name: object.metadata?.name ?? record.claimName,
      ...(source === undefined ? {} : { source }),
      ...(readyToUse === undefined ? {} : { readyToUse }),
      state: 'live',
    };
  });
  const findings = snapshots
    .filter((snapshot) => snapshot.state === 'orphaned')
    .map(
      (snapshot): Finding => ({
        kind: 'snapshot-without-object',
        pvs: [],
        path: snapshot.path,
        message: `snapshot data of DirectorySnapshot ${snapshot.namespace}/${snapshot.name} (${snapshot.uid}), whose object is gone and which was not retained: nothing restores or deletes it`,
      }),
    );
  return {
    snapshots: snapshots.sort((a, b) => b.ageSeconds - a.ageSeconds),
    findings: [...findings, ...unreadable],
  };
}
