/** Readers of the controller's Prometheus collectors, for assertions on counters and queue activity. */
import type { Registry } from 'prom-client';

/** Value of the sample of `name` whose labels are exactly `labels`; 0 when there is none yet. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Readonly<Record<string, string>>,
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const match = values.find(
    (value) =>
      Object.entries(labels).every(([key, v]) => value.labels[key] === v) &&
      Object.keys(value.labels).length === Object.keys(labels).length,
  );
  return match?.value ?? 0;
}

/** Successful and failed provision counts. */
export interface OutcomeCounts {
  readonly success: number;
  readonly failed: number;
}

/** Provision counters of class `className` (claims without a data source). */
export async function provisionCounts(registry: Registry, className: string): Promise<OutcomeCounts> {
  const labels = { class: className, source: '' };
  return {
    success: await metricValue(registry, 'controller_persistentvolumeclaim_provision_total', labels),
    failed: await metricValue(registry, 'controller_persistentvolumeclaim_provision_failed_total', labels),
  };
}

/** Delete counters of class `className`. */
export async function deleteCounts(registry: Registry, className: string): Promise<OutcomeCounts> {
  return {
    success: await metricValue(registry, 'controller_persistentvolume_delete_total', { class: className }),
    failed: await metricValue(registry, 'controller_persistentvolume_delete_failed_total', {
      class: className,
    }),
  };
}

/** Items the named work queue has finished so far, from its work-duration histogram. */
export async function processedItems(registry: Registry, queue: string): Promise<number> {
  const metric = registry.getSingleMetric('workqueue_work_duration_seconds');
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  const count = values.find(
    (value) =>
      (value as { metricName?: string }).metricName === 'workqueue_work_duration_seconds_count' &&
      value.labels.name === queue,
  );
  return count?.value ?? 0;
}
