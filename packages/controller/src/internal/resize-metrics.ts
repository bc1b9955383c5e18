/**
 * The expansion collectors, beside the six of the Go library and named like them (the Go library has
 * no expansion): `controller_persistentvolumeclaim_resize_total`, `…_resize_failed_total` and
 * `…_resize_duration_seconds`, by storage class. Registered only when the provisioner can `expand`.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { defaultBuckets, reuse } from './controller-metrics.ts';

type ResizeLabel = 'class';

/** The collectors the resize path updates. */
export interface ResizeMetrics {
  readonly resizeTotal: Counter<ResizeLabel>;
  readonly resizeFailedTotal: Counter<ResizeLabel>;
  readonly resizeDurationSeconds: Histogram<ResizeLabel>;
}

/**
 * Creates the three collectors on `registry` only, reusing another controller's (as
 * `createControllerMetrics` does).
 *
 * @throws ConfigurationError when `registry` has a collector of one of those names but another type.
 */
export function createResizeMetrics(registry: Registry, subsystem = 'controller'): ResizeMetrics {
  const registers = [registry];
  const labelNames: ResizeLabel[] = ['class'];
  const counter = (suffix: string, help: string): Counter<ResizeLabel> => {
    const name = `${subsystem}_${suffix}`;
    return reuse(registry, name, Counter) ?? new Counter({ name, help, labelNames, registers });
  };
  const name = `${subsystem}_persistentvolumeclaim_resize_duration_seconds`;
  return {
    resizeTotal: counter(
      'persistentvolumeclaim_resize_total',
      'Total number of persistent volumes expanded successfully. Broken down by storage class name.',
    ),
    resizeFailedTotal: counter(
      'persistentvolumeclaim_resize_failed_total',
      'Total number of persistent volume expansion failed attempts. Broken down by storage class name.',
    ),
    resizeDurationSeconds:
      reuse(registry, name, Histogram) ??
      new Histogram({
        name,
        help: 'Latency in seconds to expand persistent volumes. Failed expansion attempts are ignored. Broken down by storage class name.',
        labelNames,
        buckets: [...defaultBuckets],
        registers,
      }),
  };
}
