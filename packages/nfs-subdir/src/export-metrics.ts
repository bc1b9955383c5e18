/**
 * The exports of an installation serving several, as Prometheus metrics: each export's size and free
 * space as its last statfs read them (at each placement and each maintenance run of the leader),
 * whether that check (statfs, then whether the mount is writable) passed, and the new volumes placed on it.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ExportSpace } from './export-placement.ts';

/** The metric names, as the README lists them. */
export const exportMetricNames = {
  capacity: 'kube_provisioner_export_capacity_bytes',
  free: 'kube_provisioner_export_free_bytes',
  up: 'kube_provisioner_export_up',
  placements: 'kube_provisioner_export_placements_total',
} as const;

/** The per-export metrics of one registry, labelled `export`. */
export class ExportMetrics {
  readonly #capacity: Gauge<'export'>;
  readonly #free: Gauge<'export'>;
  readonly #up: Gauge<'export'>;
  readonly #placements: Counter<'export'>;

  /** Registers the metrics, with a series per export in `names` from the start. */
  constructor(registry: Registry, names: readonly string[]) {
    const gauge = (name: string, help: string): Gauge<'export'> =>
      new Gauge({ name, help, labelNames: ['export'], registers: [registry] });
    this.#capacity = gauge(exportMetricNames.capacity, 'Size of the export, as its last statfs read it.');
    this.#free = gauge(
      exportMetricNames.free,
      'Bytes an unprivileged writer can still write on the export, as its last statfs read them.',
    );
    this.#up = gauge(
      exportMetricNames.up,
      'Whether the last check of the export (statfs, then a write-access probe) passed (1) or failed or gave no answer (0).',
    );
    this.#placements = new Counter({
      name: exportMetricNames.placements,
      help: "New empty volumes placed on the export by their class's placement policy.",
      labelNames: ['export'],
      registers: [registry],
    });
    for (const name of names) this.#placements.inc({ export: name }, 0);
  }

  /** Records what statfs said of each export in `spaces`. */
  measured(spaces: readonly ExportSpace[]): void {
    for (const space of spaces) {
      const labels = { export: space.name };
      if ('error' in space) {
        this.#up.set(labels, 0);
        continue;
      }
      this.#up.set(labels, 1);
      this.#free.set(labels, space.freeBytes);
      this.#capacity.set(labels, space.capacityBytes);
    }
  }

  /** Counts a new volume placed on export `name`. */
  placed(name: string): void {
    this.#placements.inc({ export: name });
  }
}
