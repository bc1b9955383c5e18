/**
 * {@link auditVolumes}: one read-only audit of a provisioner's volumes, as a library call (the chaos
 * suite's oracle uses it) and behind the `kube-provisioner-audit` CLI.
 */
import type { KubeApi } from '@kube-provisioner/controller';
import { readClusterState } from './cluster-state.ts';
import { type ArchiveListing, type AuditSummary, type Finding, findingKinds, judge } from './findings.ts';
import { listSnapshots, type SnapshotListing } from './snapshot-listing.ts';
import { locateVolume, type VolumeLayout } from './volume-layout.ts';
import { scanVolumeRoot } from './volume-scan.ts';

/** Options of {@link auditVolumes}. */
export interface AuditOptions {
  /** Read access to PVs and PVCs (`list`), and to `DirectorySnapshot`s when the root has snapshots. */
  readonly api: KubeApi;
  /** `StorageClass.provisioner` of the audited provisioner. */
  readonly provisionerName: string;
  /** The export or host root, as mounted where the audit runs. */
  readonly root: string;
  readonly layout: VolumeLayout;
  /** See {@link JudgeInput.graceMs}. Default 5 minutes. */
  readonly graceMs?: number;
  /** See {@link ScanOptions.maxDepth}. */
  readonly maxDepth?: number;
  /** See {@link JudgeInput.projectIds}. */
  readonly projectIds?: readonly number[] | undefined;
  /** Time source, ms since the epoch. Default `Date.now`. */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
}

/** The result of an audit, also the `--output json` document. */
export interface AuditReport {
  readonly provisioner: string;
  readonly root: string;
  readonly layout: VolumeLayout;
  /** ISO 8601. */
  readonly auditedAt: string;
  readonly summary: AuditSummary;
  readonly findings: readonly Finding[];
  /** Every archive under the root with its age and expiry, oldest first. */
  readonly archives: readonly ArchiveListing[];
  /** Every snapshot of the provisioner under the root with its source and age, oldest first. */
  readonly snapshots: readonly SnapshotListing[];
}

/** The default grace for deletions, `Released` phases and temporary files in progress. */
export const defaultGraceMs: number = 5 * 60_000;

/**
 * Audits `root` against the PVs of `provisionerName`, and its snapshots against their
 * `DirectorySnapshot`s. Reads only: PVs and PVCs (and, when the root has snapshots, DirectorySnapshots)
 * are listed, the root is walked without entering volumes.
 */
export async function auditVolumes(options: AuditOptions): Promise<AuditReport> {
  const now = options.now ?? Date.now;
  const cluster = await readClusterState(options.api, options.provisionerName, options.signal);
  const pvPaths = new Set(
    cluster.volumes.flatMap((pv) => {
      const location = locateVolume(options.layout, pv);
      return location.kind === 'path' ? [location.path] : [];
    }),
  );
  const scan = await scanVolumeRoot(options.root, {
    pvPaths,
    ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
  });
  const nowMs = now();
  const judged = judge({
    layout: options.layout,
    cluster,
    scan,
    nowMs,
    graceMs: options.graceMs ?? defaultGraceMs,
    projectIds: options.projectIds,
  });
  const snapshots = await listSnapshots(
    options.api,
    options.root,
    options.provisionerName,
    nowMs,
    options.signal,
  );
  const findings = [...judged.findings, ...snapshots.findings].sort(
    (a, b) => findingKinds.indexOf(a.kind) - findingKinds.indexOf(b.kind),
  );
  return {
    provisioner: options.provisionerName,
    root: options.root,
    layout: options.layout,
    auditedAt: new Date(nowMs).toISOString(),
    summary: { ...judged.summary, findings: findings.length },
    findings,
    archives: judged.archives,
    snapshots: snapshots.snapshots,
  };
}
