/**
 * Usage of enforced volumes from project-quota accounting: no walk at all. One `report` of the
 * mount serves every enforced volume measured within a second; a volume without a project (or on a
 * root that no longer enforces) is walked as before.
 */
import type { MeasureVolume } from '@kube-provisioner/controller/usage';
import { type FsOps, VolumeRoot, volumeUsageScanner } from '@kube-provisioner/safe-fs';
import type { HostPathVolume } from './owned-volumes.ts';
import { type ProjectQuotaAccess, SizeEnforcement } from './size-enforcement.ts';
import type { ProjectUsage } from './xfs-quota.ts';

/** Options of {@link quotaMeasure}. */
export interface QuotaMeasureOptions {
  /** The root the volume paths are relative to. */
  readonly root: string;
  /** System calls of the record reads and the walks. Default: the real ones. */
  readonly fs?: FsOps | undefined;
  /** Project quotas; default `xfs_quota` and `/proc/self/mountinfo`. */
  readonly projectQuotas?: ProjectQuotaAccess | undefined;
  /** Clock of the report's age, milliseconds. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

// A round measures enforced volumes back to back: a report younger than this serves them all.
const reportMaxAgeMs = 1_000;

/** A {@link MeasureVolume} reading enforced volumes from quota accounting and walking the others. */
export function quotaMeasure(options: QuotaMeasureOptions): MeasureVolume<HostPathVolume> {
  const root = new VolumeRoot(options.root, { fs: options.fs });
  const sizes = new SizeEnforcement(root, options.projectQuotas);
  const walk = volumeUsageScanner(options.root, options.fs);
  const now = options.now ?? Date.now;
  let report: { readonly at: number; readonly usage: Promise<Map<number, ProjectUsage>> } | undefined;
  const currentReport = (signal: AbortSignal): Promise<Map<number, ProjectUsage>> => {
    if (report === undefined || now() - report.at >= reportMaxAgeMs) {
      const usage = sizes.quotas().then((quotas) => quotas.report(signal));
      report = { at: now(), usage };
      usage.catch(() => {
        report = undefined;
      });
    }
    return report.usage;
  };
  return async (volume, scan) => {
    const projectId = (await root.readRecord(volume.path))?.projectId;
    if (projectId === undefined) return walk(volume, scan);
    let usage: Map<number, ProjectUsage>;
    try {
      usage = await currentReport(scan.signal);
    } catch {
      // The root lost its quotas (remounted without prjquota): what is on disk is still measurable.
      return walk(volume, scan);
    }
    return usage.get(projectId) ?? { bytes: 0, inodes: 0 };
  };
}
