/**
 * What archive retention does, as Prometheus metrics: the recorded archives kept after each sweep,
 * and the archives the sweeps removed or failed to remove. Only the leader sweeps, so only its
 * series move.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** The metric names, as the README lists them. */
export const archiveMetricNames = {
  kept: 'kube_provisioner_archives',
  removed: 'kube_provisioner_archive_removals_total',
} as const;

/** The outcome of one sweep, as the metrics count it. */
export interface ArchiveSweepCounts {
  /** Recorded archives left after the sweep (not yet expired, or without a retention). */
  readonly kept: number;
  readonly removed: number;
  readonly failed: number;
}

/** The archive-retention metrics of one registry. */
export class ArchiveMetrics {
  readonly #kept: Gauge;
  readonly #removals: Counter<'result'>;

  constructor(registry: Registry) {
    this.#kept = new Gauge({
      name: archiveMetricNames.kept,
      help: 'Archived volumes with an ownership record, after the last retention sweep.',
      registers: [registry],
    });
    this.#removals = new Counter({
      name: archiveMetricNames.removed,
      help: 'Expired archives the retention sweeps removed (result="removed") or could not remove (result="failed").',
      labelNames: ['result'],
      registers: [registry],
    });
    // Both series exist from the start, so a rate() over them is defined before the first removal.
    this.#removals.inc({ result: 'removed' }, 0);
    this.#removals.inc({ result: 'failed' }, 0);
  }

  /** Records one sweep. */
  swept(counts: ArchiveSweepCounts): void {
    this.#kept.set(counts.kept);
    this.#removals.inc({ result: 'removed' }, counts.removed);
    this.#removals.inc({ result: 'failed' }, counts.failed);
  }
}
