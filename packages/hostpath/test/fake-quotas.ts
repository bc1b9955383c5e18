/** Project quotas for unit tests: kept in memory, on a root mounted with `prjquota`. */
import type { ProjectLimits, ProjectQuotas, ProjectUsage } from '../src/xfs-quota.ts';

/** A mount table whose `/` is XFS with project quotas: every temporary root can enforce sizes. */
export const prjquota = '22 1 8:1 / / rw,relatime - xfs /dev/sda1 rw,attr2,inode64,prjquota';

/** Project quotas kept in memory: which directory is which project, and each project's limits. */
export class FakeQuotas implements ProjectQuotas {
  readonly projects: Map<string, number> = new Map();
  readonly limits: Map<number, ProjectLimits> = new Map();
  /** Projects someone else uses on the same file system. */
  readonly foreign: Map<number, ProjectUsage> = new Map();
  /** What the accounting holds per project (default: the directory alone). */
  readonly usage: Map<number, ProjectUsage> = new Map();
  /** How many reports were asked for. */
  reports: number = 0;

  async assign(path: string, projectId: number): Promise<void> {
    this.projects.set(path, projectId);
  }

  async limit(projectId: number, limits: ProjectLimits): Promise<void> {
    if (Object.values(limits).every((limit) => limit === 0)) this.limits.delete(projectId);
    else this.limits.set(projectId, limits);
  }

  async report(): Promise<Map<number, ProjectUsage>> {
    this.reports++;
    const used = new Map(this.foreign);
    for (const id of [...this.projects.values(), ...this.limits.keys()])
      used.set(id, this.usage.get(id) ?? { bytes: 0, inodes: 1 });
    return used;
  }
}
