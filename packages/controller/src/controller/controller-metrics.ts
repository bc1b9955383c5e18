/**
 * The six `controller_*` collectors of the Go library (`controller/metrics/metrics.go`, v13): same
 * names, labels, help strings (misspellings included, dashboards match on them) and default buckets.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** Prometheus default buckets (`prometheus.DefBuckets`), in seconds. */
const defaultBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

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
 * prom-client's global registry.
 */
export function createControllerMetrics(registry: Registry, subsystem = 'controller'): ControllerMetrics {
  const registers = [registry];
  const claimLabels: ClaimLabel[] = ['class', 'source'];
  const volumeLabels: VolumeLabel[] = ['class'];
  return {
    provisionTotal: new Counter({
      name: `${subsystem}_persistentvolumeclaim_provision_total`,
      help: 'Total number of persistent volumes provisioned succesfully. Broken down by storage class name and source of the claim.',
      labelNames: claimLabels,
      registers,
    }),
    provisionFailedTotal: new Counter({
      name: `${subsystem}_persistentvolumeclaim_provision_failed_total`,
      help: 'Total number of persistent volume provision failed attempts. Broken down by storage class name and source of the claim.',
      labelNames: claimLabels,
      registers,
    }),
    provisionDurationSeconds: new Histogram({
      name: `${subsystem}_persistentvolumeclaim_provision_duration_seconds`,
      help: 'Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.',
      labelNames: claimLabels,
      buckets: [...defaultBuckets],
      registers,
    }),
    deleteTotal: new Counter({
      name: `${subsystem}_persistentvolume_delete_total`,
      help: 'Total number of persistent volumes deleted succesfully. Broken down by storage class name.',
      labelNames: volumeLabels,
      registers,
    }),
    deleteFailedTotal: new Counter({
      name: `${subsystem}_persistentvolume_delete_failed_total`,
      help: 'Total number of persistent volume delete failed attempts. Broken down by storage class name.',
      labelNames: volumeLabels,
      registers,
    }),
    deleteDurationSeconds: new Histogram({
      name: `${subsystem}_persistentvolume_delete_duration_seconds`,
      help: 'Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.',
      labelNames: volumeLabels,
      buckets: [...defaultBuckets],
      registers,
    }),
  };
}
