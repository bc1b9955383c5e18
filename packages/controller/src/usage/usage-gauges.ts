/**
 * The per-volume usage gauges, named after kubelet's `kubelet_volume_stats_*` and labelled like them
 * (`namespace`, `persistentvolumeclaim`) plus the PV's name. One series per volume this instance
 * owns: a volume that is gone, or that this instance stops owning, loses its series, so the label
 * set stays as large as the set of volumes.
 */
import { Gauge, type Registry } from 'prom-client';

/** The metric names, as the README's table lists them. */
export const volumeStatsMetrics = {
  usedBytes: 'kube_provisioner_volume_stats_used_bytes',
  inodesUsed: 'kube_provisioner_volume_stats_inodes_used',
  requestedBytes: 'kube_provisioner_volume_stats_requested_bytes',
  measuredTimestamp: 'kube_provisioner_volume_stats_measured_timestamp_seconds',
} as const;

/** Who a series is about. */
export interface VolumeLabels {
  readonly pvName: string;
  readonly namespace: string;
  readonly claimName: string;
}

const labelNames = ['namespace', 'persistentvolumeclaim', 'persistentvolume'] as const;
type LabelName = (typeof labelNames)[number];

/** The gauges of one registry, keyed by PV name. */
export class UsageGauges {
  readonly #gauges: readonly Gauge<LabelName>[];
  readonly #used: Gauge<LabelName>;
  readonly #inodes: Gauge<LabelName>;
  readonly #requested: Gauge<LabelName>;
  readonly #measuredAt: Gauge<LabelName>;
  readonly #series = new Map<string, Record<LabelName, string>>();

  constructor(registry: Registry) {
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    this.#used = gauge(
      volumeStatsMetrics.usedBytes,
      'Bytes allocated by the volume (du -x, or its project quota).',
    );
    this.#inodes = gauge(volumeStatsMetrics.inodesUsed, 'Inodes used by the volume.');
    this.#requested = gauge(
      volumeStatsMetrics.requestedBytes,
      'Storage requested for the volume (PV capacity).',
    );
    this.#measuredAt = gauge(
      volumeStatsMetrics.measuredTimestamp,
      'Unix time the usage was last measured; time() minus this is the age of the values.',
    );
    this.#gauges = [this.#used, this.#inodes, this.#requested, this.#measuredAt];
  }

  /** Sets the requested size, before any measurement exists. */
  requested(volume: VolumeLabels, bytes: number | undefined): void {
    const labels = this.#labels(volume);
    if (bytes === undefined) this.#requested.remove(labels);
    else this.#requested.set(labels, bytes);
  }

  /** Records a finished measurement taken at `atMs` (epoch milliseconds). */
  measured(
    volume: VolumeLabels,
    usage: { readonly bytes: number; readonly inodes: number },
    atMs: number,
  ): void {
    const labels = this.#labels(volume);
    this.#used.set(labels, usage.bytes);
    this.#inodes.set(labels, usage.inodes);
    this.#measuredAt.set(labels, atMs / 1000);
  }

  /** Drops the series of every volume not in `pvNames`. */
  keepOnly(pvNames: ReadonlySet<string>): void {
    for (const [pvName, labels] of this.#series) {
      if (pvNames.has(pvName)) continue;
      for (const gauge of this.#gauges) gauge.remove(labels);
      this.#series.delete(pvName);
    }
  }

  #labels(volume: VolumeLabels): Record<LabelName, string> {
    const labels = {
      namespace: volume.namespace,
      persistentvolumeclaim: volume.claimName,
      persistentvolume: volume.pvName,
    };
    const previous = this.#series.get(volume.pvName);
    // A PV re-bound to another claim: its old series must not linger beside the new one.
    if (
      previous !== undefined &&
      (previous.namespace !== labels.namespace ||
        previous.persistentvolumeclaim !== labels.persistentvolumeclaim)
    ) {
      for (const gauge of this.#gauges) gauge.remove(previous);
    }
    this.#series.set(volume.pvName, labels);
    return labels;
  }
}
