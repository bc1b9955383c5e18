/**
 * One retention sweep, as the leader's maintenance runs it: expired archives removed through
 * safe-fs (each a fenced delete), sized when usage measuring is on, the outcome counted and logged.
 */
import type { OperationContext } from '@kube-provisioner/controller';
import type { VolumeRoot } from '@kube-provisioner/safe-fs';
import type { ArchiveSweepSink } from './archive-metrics.ts';
import type { ArchiveSizes } from './archive-sizes.ts';

/**
 * Removes the archives of `root` whose retention has passed; see `VolumeRoot.removeExpiredArchives`.
 * With `sizes`, the archives are sized too (an expired one before its removal) for the byte metrics.
 */
export async function sweepExpiredArchives(
  root: VolumeRoot,
  metrics: ArchiveSweepSink | undefined,
  context: OperationContext,
  sizes?: ArchiveSizes,
): Promise<void> {
  const report = await root.removeExpiredArchives({
    beforeEachWrite: () => context.assertLeader(),
    measure: sizes && ((path) => sizes.measure(path, context.signal, context.logger)),
  });
  sizes?.endSweep();
  metrics?.swept({
    kept: report.kept,
    removed: report.removed.length,
    failed: report.failed.length,
    bytes: report.bytes,
  });
  for (const path of report.removed) context.logger.info({ path }, 'expired archive removed');
  for (const { path, error } of report.failed) {
    context.logger.warn(
      { path, error },
      'could not remove an expired archive; trying again at the next sweep',
    );
  }
  context.logger.debug(
    { removed: report.removed.length, kept: report.kept, nextExpiry: report.nextExpiry, bytes: report.bytes },
    'archive retention swept',
  );
}
