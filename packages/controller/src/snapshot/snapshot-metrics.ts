/**
 * What the snapshot leader does, as Prometheus metrics: the snapshots it took, the copies that
 * failed, the bytes copied into snapshots, how long each took and the snapshots their class's
 * bounds deleted. Only the leader takes snapshots,
 * so only its series move.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { SnapshotBoundName } from './snapshot-bounds.ts';

/** The metric names, as the reference lists them. */
export const snapshotMetricNames = {
  taken: 'kube_provisioner_snapshot_taken_total',
  failed: 'kube_provisioner_snapshot_failed_total',
  bytes: 'kube_provisioner_snapshot_bytes_total',
  duration: 'kube_provisioner_snapshot_duration_seconds',
  expired: 'kube_provisioner_snapshot_expired_total',
} as const;

/** The snapshot metrics of one registry. */
export class SnapshotMetrics {
  readonly #taken: Counter;
  readonly #failed: Counter;
  readonly #bytes: Counter;
  readonly #duration: Histogram;
  readonly #expired: Counter<'bound'>;

  constructor(registry: Registry) {
    this.#taken = new Counter({
      name: snapshotMetricNames.taken,
      help: 'DirectorySnapshots taken: copied whole and marked ready to use.',
      registers: [registry],
    });
    this.#failed = new Counter({
      name: snapshotMetricNames.failed,
      help: 'Snapshot copies that failed (each is tried again after a back-off).',
      registers: [registry],
    });
    this.#bytes = new Counter({
      name: snapshotMetricNames.bytes,
      help: 'Bytes of file data copied into the snapshots taken.',
      registers: [registry],
    });
    this.#duration = new Histogram({
      name: snapshotMetricNames.duration,
      help: 'Seconds from the start of a snapshot copy to the snapshot marked ready.',
      // A small tree takes milliseconds; a large volume, copied in full, hours.
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600],
      registers: [registry],
    });
    this.#expired = new Counter({
      name: snapshotMetricNames.expired,
      help: 'DirectorySnapshots deleted by their source claim class bound (snapshotsPerClaim, snapshotRetention).',
      labelNames: ['bound'],
      registers: [registry],
    });
  }

  /** A snapshot of `bytes` bytes was taken in `seconds`. */
  taken(bytes: number, seconds: number): void {
    this.#taken.inc();
    this.#bytes.inc(bytes);
    this.#duration.observe(seconds);
  }

  /** A snapshot was deleted by `bound` of its source claim's class. */
  expired(bound: SnapshotBoundName): void {
    this.#expired.inc({ bound });
  }

  /** A copy failed. */
  failed(): void {
    this.#failed.inc();
  }
}
