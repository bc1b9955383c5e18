/**
 * What archive retention does, as Prometheus metrics: the recorded archives kept after each sweep,
 * and the archives the sweeps removed or failed to remove; when the sweeps size the archives, also
 * the bytes kept and the bytes removed (these two appear with the first sized sweep). Only the
 * leader sweeps, so only its series move.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** The metric names, as the README lists them. */
export const archiveMetricNames = {
  kept: 'kube_provisioner_archives',
  removed: 'kube_provisioner_archive_removals_total',
  bytes: 'kube_provisioner_archive_bytes',
  removedBytes: 'kube_provisioner_archive_removed_bytes_total',
} as const;

/** The outcome of one sweep, as the metrics count it. */
export interface ArchiveSweepCounts {
  /** Recorded archives left after the sweep (not yet expired, or without a retention). */
  readonly kept: number;
  readonly removed: number;
  readonly failed: number;
  /** Bytes the kept archives hold and the removed ones held, when the sweep sized them. */
  readonly bytes?: { readonly kept: number; readonly removed: number } | undefined;
}

/** Where an export's retention sweeps report: {@link ArchiveMetrics}, or its share for one export. */
export interface ArchiveSweepSink {
  /** Records one sweep. */
  swept(counts: ArchiveSweepCounts): void;
}

/**
 * The archive-retention metrics of one registry. With several exports each reports through its
 * {@link ArchiveMetrics.forExport} share, and the gauges show the sum of every export's last sweep.
 */
export class ArchiveMetrics implements ArchiveSweepSink {
  readonly #kept: Gauge;
  readonly #removals: Counter<'result'>;
  readonly #registry: Registry;
  #bytes: { readonly kept: Gauge; readonly removed: Counter } | undefined;
  /** The last sweep of each share (`''`: the one export of a single-export installation). */
  readonly #last = new Map<string, ArchiveSweepCounts>();

  constructor(registry: Registry) {
    this.#registry = registry;
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
    this.#sweptShare('', counts);
  }

  /** The share of export `name`: its sweeps count towards the same series as the other exports'. */
  forExport(name: string): ArchiveSweepSink {
    return { swept: (counts) => this.#sweptShare(name, counts) };
  }

  #sweptShare(share: string, counts: ArchiveSweepCounts): void {
    // A sweep that did not size its archives leaves that share's last known bytes.
    const previous = this.#last.get(share)?.bytes;
    this.#last.set(share, { ...counts, bytes: counts.bytes ?? previous });
    const last = [...this.#last.values()];
    this.#kept.set(last.reduce((sum, each) => sum + each.kept, 0));
    this.#removals.inc({ result: 'removed' }, counts.removed);
    this.#removals.inc({ result: 'failed' }, counts.failed);
    if (counts.bytes === undefined) return;
    const bytes = this.#bytesMetrics();
    bytes.kept.set(last.reduce((sum, each) => sum + (each.bytes?.kept ?? 0), 0));
    bytes.removed.inc(counts.bytes.removed);
  }

  /** Registered with the first sized sweep: without sizing, a 0 would claim the archives are empty. */
  #bytesMetrics(): { readonly kept: Gauge; readonly removed: Counter } {
    this.#bytes ??= {
      kept: new Gauge({
        name: archiveMetricNames.bytes,
        help: 'Bytes the archived volumes with an ownership record hold (as du counts them), after the last retention sweep.',
        registers: [this.#registry],
      }),
      removed: new Counter({
        name: archiveMetricNames.removedBytes,
        help: 'Bytes the expired archives held that the retention sweeps removed.',
        registers: [this.#registry],
      }),
    };
    return this.#bytes;
  }
}
