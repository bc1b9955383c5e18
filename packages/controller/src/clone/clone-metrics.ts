/**
 * What the background clones do, as Prometheus metrics: the copies running, the bytes they copied
 * (counted as they go, so a rate shows the throughput), and how the copies ended. Only the leader
 * clones, so only its series move.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CloneProgress } from './clone-progress.ts';

/** The metric names, as the READMEs list them. */
export const cloneMetricNames = {
  running: 'kube_provisioner_clones_running',
  bytes: 'kube_provisioner_clone_bytes_total',
  ended: 'kube_provisioner_clones_total',
} as const;

/** How a copy ended. */
export type CloneResult = 'succeeded' | 'failed' | 'cancelled';

/** The clone metrics of one registry. */
export class CloneMetrics {
  readonly #running: Gauge;
  readonly #bytes: Counter;
  readonly #ended: Counter<'result'>;

  /** Several clone jobs on one registry (one per root of a node, say) count on the same series. */
  constructor(registry: Registry) {
    const registered = (name: string) => registry.getSingleMetric(name);
    this.#running =
      (registered(cloneMetricNames.running) as Gauge | undefined) ??
      new Gauge({
        name: cloneMetricNames.running,
        help: 'Clones (claims with a PersistentVolumeClaim data source) being copied now.',
        registers: [registry],
      });
    this.#bytes =
      (registered(cloneMetricNames.bytes) as Counter | undefined) ??
      new Counter({
        name: cloneMetricNames.bytes,
        help: 'Bytes of file data the clones copied, counted as they copy.',
        registers: [registry],
      });
    this.#ended =
      (registered(cloneMetricNames.ended) as Counter<'result'> | undefined) ??
      new Counter({
        name: cloneMetricNames.ended,
        help: 'Clones that ended: result="succeeded", "failed" (retried by the claim\'s next call) or "cancelled" (claim deleted).',
        labelNames: ['result'],
        registers: [registry],
      });
    for (const result of ['succeeded', 'failed', 'cancelled'] as const) this.#ended.inc({ result }, 0);
  }

  /** A copy started. */
  started(): void {
    this.#running.inc();
  }

  /** A copy advanced from `before` to `now`. */
  advanced(before: CloneProgress, now: CloneProgress): void {
    if (now.bytes > before.bytes) this.#bytes.inc(now.bytes - before.bytes);
  }

  /** A copy ended. */
  ended(result: CloneResult): void {
    this.#running.dec();
    this.#ended.inc({ result });
  }
}
