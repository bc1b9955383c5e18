/**
 * The audit's judgement: from what the API server holds and what the root contains, the
 * inconsistencies an operator must look at. Pure, so every rule is tested on fixtures.
 */
import { finalizerPV } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ClusterState } from './cluster-state.ts';
import { isAuditedHere, locateVolume, type VolumeLayout } from './volume-layout.ts';
import { isArchivedPath, type ScannedVolume, type VolumeScan } from './volume-scan.ts';

/**
 * What is wrong:
 * - `pv-without-directory`: a PV whose directory is missing or lies outside the root;
 * - `pv-directory-mismatch`: a PV whose directory's ownership record names another PV;
 * - `directory-without-pv`: a recorded or upstream-named volume directory no PV points at, neither
 *   archived nor released (retained);
 * - `claim-provisioned-twice`: two or more PVs whose `claimRef.uid` is the same claim;
 * - `nested-volume`: a volume directory inside another (deleting the outer would take the inner's
 *   data along; the outer's workload can read and replace it);
 * - `finalizer-stuck`: a PV with the provisioner's finalizer, deleted longer ago than the grace;
 * - `released-delete`: a `Released` PV with reclaim policy `Delete` older than the grace, which the
 *   provisioner should have deleted;
 * - `temporary-file`: a temporary ownership record left by an interrupted write;
 * - `stray-record`: an ownership record or adoption lock whose directory is gone;
 * - `project-without-volume`: a quota project on the root's file system that no volume's record holds
 *   (a limit left behind by an interrupted create or delete of an enforced volume);
 * - `snapshot-without-object`: a snapshot directory in the root's snapshot area whose
 *   `DirectorySnapshot` is gone and which was not retained (`deletionPolicy: Retain`): nothing restores
 *   or deletes it;
 * - `unreadable`: something the audit could not read (a malformed record, a denied directory).
 */
export type FindingKind =
  | 'pv-without-directory'
  | 'pv-directory-mismatch'
  | 'directory-without-pv'
  | 'claim-provisioned-twice'
  | 'nested-volume'
  | 'finalizer-stuck'
  | 'released-delete'
  | 'temporary-file'
  | 'stray-record'
  | 'project-without-volume'
  | 'snapshot-without-object'
  | 'unreadable';

/** Every {@link FindingKind}, in report order. */
export const findingKinds: readonly FindingKind[] = [
  'pv-without-directory',
  'pv-directory-mismatch',
  'directory-without-pv',
  'claim-provisioned-twice',
  'nested-volume',
  'finalizer-stuck',
  'released-delete',
  'temporary-file',
  'stray-record',
  'project-without-volume',
  'snapshot-without-object',
  'unreadable',
];

/** The claim a finding concerns. */
export interface ClaimReference {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One inconsistency. */
export interface Finding {
  readonly kind: FindingKind;
  /** The PV(s) concerned, if any. */
  readonly pvs: readonly string[];
  /** The volume directory or file relative to the root, if any. */
  readonly path?: string;
  readonly claim?: ClaimReference;
  /** One sentence for a human. */
  readonly message: string;
}

/** Counts of what was audited, for the summary line. */
export interface AuditSummary {
  /** PVs of the provisioner audited here. */
  readonly persistentVolumes: number;
  /** Volume directories found under the root (archives and retained ones included). */
  readonly volumeDirectories: number;
  /** Directories kept by `archive` after their PV was deleted. */
  readonly archived: number;
  /** Directories kept by `retain` (record marked released) after their PV was deleted. */
  readonly retained: number;
  readonly findings: number;
}

/** Inputs of {@link judge}. */
export interface JudgeInput {
  readonly layout: VolumeLayout;
  readonly cluster: ClusterState;
  readonly scan: VolumeScan;
  /** Now, in ms since the epoch. */
  readonly nowMs: number;
  /**
   * How long a deletion, a `Released` phase or a temporary file may last before it counts: they
   * are normal while the provisioner works.
   */
  readonly graceMs: number;
  /**
   * The project IDs the root's file system has quota usage or limits for (from `xfs_quota report`);
   * absent: projects are not checked.
   */
  readonly projectIds?: readonly number[] | undefined;
}

/** The findings and summary of {@link judge}. */
export interface Judgement {
  readonly findings: readonly Finding[];
  readonly summary: AuditSummary;
  /** The archives under the root, oldest first. */
  readonly archives: readonly ArchiveListing[];
}

/** One archive and how long it has left, from its ownership record. */
export interface ArchiveListing {
  /** The archive directory, relative to the root. */
  readonly path: string;
  /** The PV and claim it was archived from; absent for an archive without a record (upstream's). */
  readonly pvName?: string;
  readonly claim?: ClaimReference;
  /** ISO 8601, from the record. */
  readonly archivedAt?: string;
  /** Seconds since it was archived. */
  readonly ageSeconds?: number;
  /** ISO 8601; absent: kept forever. */
  readonly expiresAt?: string;
  /** Seconds until the leader's sweep may remove it; 0 once expired. */
  readonly expiresInSeconds?: number;
}

function archiveListing(directory: ScannedVolume, nowMs: number): ArchiveListing {
  const { record } = directory;
  if (record === undefined) return { path: directory.path };
  // Whole seconds from `from` to `to`, never negative.
  const seconds = (from: number, to: number) => Math.max(0, Math.floor((to - from) / 1000));
  const { archivedAt, expiresAt } = record;
  return {
    path: directory.path,
    pvName: record.pvName,
    claim: { namespace: record.namespace, name: record.claimName, uid: record.claimUid },
    ...(archivedAt === undefined ? {} : { archivedAt, ageSeconds: seconds(Date.parse(archivedAt), nowMs) }),
    ...(expiresAt === undefined
      ? {}
      : { expiresAt, expiresInSeconds: seconds(nowMs, Date.parse(expiresAt)) }),
  };
}

function claimOf(pv: Readonly<V1PersistentVolume>): ClaimReference | undefined {
  const ref = pv.spec?.claimRef;
  if (!ref?.uid) return undefined;
  return { namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid };
}

function nameOf(pv: Readonly<V1PersistentVolume>): string {
  return pv.metadata?.name ?? '';
}

function withClaim(pv: Readonly<V1PersistentVolume>): { claim?: ClaimReference } {
  const claim = claimOf(pv);
  return claim === undefined ? {} : { claim };
}

function age(nowMs: number, since: Date | string | undefined): number | undefined {
  if (since === undefined) return undefined;
  const at = new Date(since).getTime();
  return Number.isNaN(at) ? undefined : nowMs - at;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** A finding for every volume path (of a PV or found on disk) that lies inside another. */
function nestedVolumes(paths: readonly string[]): Finding[] {
  const volumes = new Set(paths);
  const findings: Finding[] = [];
  for (const path of volumes) {
    const segments = path.split('/');
    const outer = segments
      .slice(0, -1)
      .map((_, index) => segments.slice(0, index + 1).join('/'))
      .find((ancestor) => volumes.has(ancestor));
    if (outer === undefined) continue;
    findings.push({
      kind: 'nested-volume',
      pvs: [],
      path,
      message: `volume ${path} lies inside volume ${outer}: deleting ${outer} would remove its data`,
    });
  }
  return findings;
}

/** Compares the API server's view with the root's and lists what does not add up. */
export function judge(input: JudgeInput): Judgement {
  const { layout, cluster, scan, nowMs, graceMs } = input;
  const findings: Finding[] = [];
  const volumes = cluster.volumes.filter((pv) => isAuditedHere(layout, pv));
  const directories = new Map(scan.volumes.map((volume) => [volume.path, volume]));
  const pointedAt = new Set<string>();

  for (const pv of volumes) {
    const name = nameOf(pv);
    const location = locateVolume(layout, pv);
    if (location.kind === 'path') pointedAt.add(location.path);
    const deletedFor = age(nowMs, pv.metadata?.deletionTimestamp);
    if (deletedFor !== undefined) {
      if (deletedFor > graceMs && (pv.metadata?.finalizers ?? []).includes(finalizerPV)) {
        findings.push({
          kind: 'finalizer-stuck',
          pvs: [name],
          ...withClaim(pv),
          message: `PV ${name} was deleted ${seconds(deletedFor)} ago and still has the finalizer ${finalizerPV}`,
        });
      }
      continue;
    }
    if (pv.status?.phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      const releasedFor = age(nowMs, pv.status.lastPhaseTransitionTime);
      if (releasedFor === undefined || releasedFor > graceMs) {
        const since = releasedFor === undefined ? '' : ` for ${seconds(releasedFor)}`;
        findings.push({
          kind: 'released-delete',
          pvs: [name],
          ...withClaim(pv),
          message: `PV ${name} has been Released${since} with reclaim policy Delete and was not deleted`,
        });
        continue;
      }
    }
    if (location.kind === 'elsewhere') {
      findings.push({
        kind: 'pv-without-directory',
        pvs: [name],
        ...withClaim(pv),
        message: `PV ${name} has no directory under the root: ${location.reason}`,
      });
      continue;
    }
    const directory = directories.get(location.path);
    if (directory === undefined) {
      findings.push({
        kind: 'pv-without-directory',
        pvs: [name],
        path: location.path,
        ...withClaim(pv),
        message: `PV ${name} points at ${location.path}, which does not exist`,
      });
    } else if (directory.record !== undefined && directory.record.pvName !== name) {
      findings.push({
        kind: 'pv-directory-mismatch',
        pvs: [name, directory.record.pvName],
        path: location.path,
        ...withClaim(pv),
        message: `PV ${name} points at ${location.path}, whose ownership record names PV ${directory.record.pvName}`,
      });
    }
  }

  findings.push(...duplicateClaims(volumes, cluster.boundVolumeOfClaim));
  findings.push(...nestedVolumes([...pointedAt, ...directories.keys()]));

  const archives: ArchiveListing[] = [];
  let retained = 0;
  for (const directory of scan.volumes) {
    if (pointedAt.has(directory.path)) continue;
    if (directory.record?.releasedAt !== undefined) {
      retained++;
    } else if (isArchivedPath(directory.path)) {
      archives.push(archiveListing(directory, nowMs));
    } else {
      const { record } = directory;
      findings.push({
        kind: 'directory-without-pv',
        pvs: record === undefined ? [] : [record.pvName],
        path: directory.path,
        ...(record === undefined
          ? {}
          : { claim: { namespace: record.namespace, name: record.claimName, uid: record.claimUid } }),
        message:
          record === undefined
            ? `directory ${directory.path} looks like a volume but no PV points at it`
            : `directory ${directory.path} was provisioned for ${record.namespace}/${record.claimName} as PV ${record.pvName}, which no PV points at`,
      });
    }
  }

  for (const leftover of scan.leftovers) {
    const leftFor = nowMs - leftover.modifiedAtMs;
    if (leftover.kind === 'temporary') {
      if (leftFor <= graceMs) continue;
      findings.push({
        kind: 'temporary-file',
        pvs: [],
        path: leftover.path,
        message: `temporary ownership record ${leftover.path} was left ${seconds(leftFor)} ago by an interrupted write`,
      });
    } else {
      findings.push({
        kind: 'stray-record',
        pvs: [],
        path: leftover.path,
        message: `${leftover.kind === 'lock' ? 'adoption lock' : 'ownership record'} ${leftover.path} belongs to a directory that does not exist`,
      });
    }
  }

  findings.push(...unrecordedProjects(input.projectIds ?? [], scan));

  for (const entry of scan.unreadable) {
    findings.push({
      kind: 'unreadable',
      pvs: [],
      path: entry.path,
      message: `could not read ${entry.path}: ${entry.error}`,
    });
  }

  findings.sort((a, b) => findingKinds.indexOf(a.kind) - findingKinds.indexOf(b.kind));
  return {
    findings,
    summary: {
      persistentVolumes: volumes.length,
      volumeDirectories: scan.volumes.length,
      archived: archives.length,
      retained,
      findings: findings.length,
    },
    archives: archives.sort((a, b) => (b.ageSeconds ?? 0) - (a.ageSeconds ?? 0)),
  };
}

/** A finding for every project ID (but the default project 0) no scanned volume's record holds. */
function unrecordedProjects(projectIds: readonly number[], scan: VolumeScan): Finding[] {
  const recorded = new Set(scan.volumes.map((volume) => volume.record?.projectId));
  return projectIds
    .filter((id) => id !== 0 && !recorded.has(id))
    .map((id) => ({
      kind: 'project-without-volume',
      pvs: [],
      message: `quota project ${id} has usage or limits on the root's file system, but no volume's ownership record holds it`,
    }));
}

function duplicateClaims(
  volumes: readonly V1PersistentVolume[],
  boundVolumeOfClaim: ReadonlyMap<string, string>,
): Finding[] {
  const byClaim = new Map<string, V1PersistentVolume[]>();
  for (const pv of volumes) {
    const uid = pv.spec?.claimRef?.uid;
    if (!uid) continue;
    byClaim.set(uid, [...(byClaim.get(uid) ?? []), pv]);
  }
  return [...byClaim.entries()].flatMap(([uid, pvs]): Finding[] => {
    const first = pvs[0];
    if (pvs.length < 2 || first === undefined) return [];
    const names = pvs.map(nameOf).sort();
    const bound = boundVolumeOfClaim.get(uid);
    const which = bound === undefined ? 'the claim no longer exists' : `the claim is bound to ${bound}`;
    const claim = claimOf(first);
    return [
      {
        kind: 'claim-provisioned-twice',
        pvs: names,
        ...(claim === undefined ? {} : { claim }),
        message: `claim ${claim?.namespace}/${claim?.name} (${uid}) has ${pvs.length} PVs: ${names.join(', ')}; ${which}`,
      },
    ];
  });
}
