/**
 * One retention sweep, as the leader's maintenance runs it: expired archives removed through
 * safe-fs (each a fenced delete), the outcome counted and logged.
 */
import type { OperationContext } from '@kube-provisioner/controller';
import type { VolumeRoot } from '@kube-provisioner/safe-fs';
import type { ArchiveMetrics } from './archive-metrics.ts';

/** Removes the archives of `root` whose retention has passed; see `VolumeRoot.removeExpiredArchives`. */
export async function sweepExpiredArchives(
  root: VolumeRoot,
  metrics: ArchiveMetrics | undefined,
  context: OperationContext,
): Promise<void> {
  const report = await root.removeExpiredArchives({ beforeEachWrite: () => context.assertLeader() });
  metrics?.swept({ kept: report.kept, removed: report.removed.length, failed: report.failed.length });
  for (const path of report.removed) context.logger.info({ path }, 'expired archive removed');
  for (const { path, error } of report.failed) {
    context.logger.warn(
      { path, error },
      'could not remove an expired archive; trying again at the next sweep',
    );
  }
  context.logger.debug(
    { removed: report.removed.length, kept: report.kept, nextExpiry: report.nextExpiry },
    'archive retention swept',
  );
}
