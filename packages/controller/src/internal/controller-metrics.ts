/**
 * The six `controller_*` collectors of the Go library (`controller/metrics/metrics.go`, v13.1.0): same
 * names, labels, help strings (v13.1.0 corrected their "succesfully") and default buckets.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { ConfigurationError } from '../configuration-error.ts';

/** Prometheus default buckets (`prometheus.DefBuckets`), in seconds. */
export const defaultBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type ClaimLabel = 'class' | 'source';
type VolumeLabel = 'class';

/** The collectors the controller updates. */
export interface ControllerMetrics {
  readonly provisionTotal: Counter<ClaimLabel>;
  readonly provisionFailedTotal: Counter<ClaimLabel>;
  readonly provisionDurationSeconds: Histogram<ClaimLabel>;
  readonly deleteTotal: Counter<VolumeLabel>;
  readonly deleteFailedTotal: Counter<VolumeLabel>;
  readonly deleteDurationSeconds: Histogram<VolumeLabel>;
}

/**
 * Creates the six collectors named `<subsystem>_…` and registers them in `registry` only, never in
 * prom-client's global registry. Collectors already on `registry` (another controller's) are reused,
 * so controllers sharing a host registry add up in one set of series, as a Go process would.
 *
 * @throws ConfigurationError when `registry` has a collector of one of those names but another type.
 */
export function createControllerMetrics(registry: Registry, subsystem = 'controller'): ControllerMetrics {
  const registers = [registry];
  const counter = <L extends string>(suffix: string, help: string, labelNames: L[]): Counter<L> => {
    const name = `${subsystem}_${suffix}`;
    return reuse(registry, name, Counter) ?? new Counter({ name, help, labelNames, registers });
  };
  const histogram = <L extends string>(suffix: string, help: string, labelNames: L[]): Histogram<L> => {
    const name = `${subsystem}_${suffix}`;
    return (
      reuse(registry, name, Histogram) ??
      new Histogram({ name, help, labelNames, buckets: [...defaultBuckets], registers })
    );
  };
  const claimLabels: ClaimLabel[] = ['class', 'source'];
  const volumeLabels: VolumeLabel[] = ['class'];
  return {
    provisionTotal: counter(
      'persistentvolumeclaim_provision_total',
      'Total number of persistent volumes provisioned successfully. Broken down by storage class name and source of the claim.',
      claimLabels,
    ),
    provisionFailedTotal: counter(
      'persistentvolumeclaim_provision_failed_total',
      'Total number of persistent volume provision failed attempts. Broken down by storage class name and source of the claim.',
      claimLabels,
    ),
    provisionDurationSeconds: histogram(
      'persistentvolumeclaim_provision_duration_seconds',
      'Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.',
      claimLabels,
    ),
    deleteTotal: counter(
      'persistentvolume_delete_total',
      'Total number of persistent volumes deleted successfully. Broken down by storage class name.',
      volumeLabels,
    ),
    deleteFailedTotal: counter(
      'persistentvolume_delete_failed_total',
      'Total number of persistent volume delete failed attempts. Broken down by storage class name.',
      volumeLabels,
    ),
    deleteDurationSeconds: histogram(
      'persistentvolume_delete_duration_seconds',
      'Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.',
      volumeLabels,
    ),
  };
}

/** The collector `name` already on `registry`, if any; it must be a `type`. */
export function reuse<T>(
  registry: Registry,
  name: string,
  type: abstract new (...args: never[]) => T,
): T | undefined {
  const existing = registry.getSingleMetric(name);
  if (existing === undefined) return undefined;
  if (!(existing instanceof type)) {
    throw new ConfigurationError([`metricsRegistry already has a collector "${name}" of another type`]);
  }
  return existing;
}
