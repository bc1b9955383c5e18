import { register as globalRegistry, Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ItemFastSlowRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { RateLimitingQueue } from '../src/workqueue/rate-limiting-queue.ts';

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

async function samples(registry: Registry, metric: string): Promise<Sample[]> {
  const collector = registry.getSingleMetric(metric);
  if (collector === undefined) throw new Error(`${metric} is not registered`);
  return (await collector.get()).values as Sample[];
}

/** The value of a gauge or counter series, or of one histogram sample (`_sum`, `_count`, `_bucket`). */
async function value(registry: Registry, metric: string, queue: string, sample = metric): Promise<number> {
  const found = (await samples(registry, metric)).find(
    (s) => s.labels.name === queue && (s.metricName ?? metric) === sample && s.labels.le === undefined,
  );
  if (found === undefined) throw new Error(`no ${sample}{name="${queue}"}`);
  return found.value;
}

/** Takes the next item, as a worker would. */
async function take(queue: RateLimitingQueue): Promise<string> {
  const next = await queue.get();
  if (next.shutdown) throw new Error('queue is shut down');
  return next.item;
}

describe('work queue metrics', () => {
  let registry: Registry;
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    registry = new Registry();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('registers every collector with series at zero for a new queue', async () => {
    new RateLimitingQueue({ name: 'claims', registry });
    for (const metric of [
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ]) {
      expect(await value(registry, metric, 'claims')).toBe(0);
    }
    expect(registry.getSingleMetric('workqueue_queue_duration_seconds')).toBeDefined();
    expect(registry.getSingleMetric('workqueue_work_duration_seconds')).toBeDefined();
  });

  it('counts adds after de-duplication and the depth until items are taken', async () => {
    const queue = new RateLimitingQueue({ name: 'claims', registry });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(await value(registry, 'workqueue_adds_total', 'claims')).toBe(2);
    expect(await value(registry, 'workqueue_depth', 'claims')).toBe(2);
    await take(queue);
    expect(await value(registry, 'workqueue_depth', 'claims')).toBe(1);
  });

  it('counts an add while processing in depth until the item is taken again', async () => {
    const queue = new RateLimitingQueue({ name: 'claims', registry });
    queue.add('a');
    await take(queue);
    queue.add('a');
    expect(await value(registry, 'workqueue_depth', 'claims')).toBe(1);
    queue.done('a');
    await take(queue);
    expect(await value(registry, 'workqueue_depth', 'claims')).toBe(0);
  });

  it('observes time in queue and time in work on the queue clock', async () => {
    const queue = new RateLimitingQueue({ name: 'claims', registry });
    queue.add('a');
    vi.advanceTimersByTime(250);
    await take(queue);
    vi.advanceTimersByTime(2000);
    queue.done('a');

    const queueDuration = 'workqueue_queue_duration_seconds';
    const workDuration = 'workqueue_work_duration_seconds';
    expect(await value(registry, queueDuration, 'claims', `${queueDuration}_sum`)).toBe(0.25);
    expect(await value(registry, queueDuration, 'claims', `${queueDuration}_count`)).toBe(1);
    expect(await value(registry, workDuration, 'claims', `${workDuration}_sum`)).toBe(2);
  });

  it('uses ten exponential buckets from 1e-8 s by factors of 10', async () => {
    const queue = new RateLimitingQueue({ name: 'claims', registry });
    queue.add('a');
    await take(queue);
    const bounds = (await samples(registry, 'workqueue_queue_duration_seconds'))
      .map((s) => s.labels.le)
      .filter((le) => le !== undefined && le !== '+Inf');
    expect(bounds.map((le) => Math.log10(Number(le)))).toEqual(
      Array.from({ length: 10 }, (_, i) => expect.closeTo(i - 8, 9)),
    );
  });

  it('counts every addAfter as a retry, including rate-limited adds', async () => {
    const queue = new RateLimitingQueue({
      name: 'claims',
      registry,
      rateLimiter: new ItemFastSlowRateLimiter(10, 10, 1),
    });
    queue.addAfter('a', 0);
    queue.addAfter('b', 100);
    queue.addRateLimited('c');
    expect(await value(registry, 'workqueue_retries_total', 'claims')).toBe(3);
  });

  it('refreshes the unfinished-work gauges every 500 ms while items are processed', async () => {
    const queue = new RateLimitingQueue({ name: 'claims', registry });
    queue.add('a');
    queue.add('b');
    await take(queue);
    vi.advanceTimersByTime(1000);
    await take(queue);
    vi.advanceTimersByTime(499);
    expect(await value(registry, 'workqueue_unfinished_work_seconds', 'claims')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await value(registry, 'workqueue_unfinished_work_seconds', 'claims')).toBe(2);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', 'claims')).toBe(1.5);

    queue.done('a');
    queue.done('b');
    vi.advanceTimersByTime(500);
    expect(await value(registry, 'workqueue_unfinished_work_seconds', 'claims')).toBe(0);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', 'claims')).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('lets several queues share one registry, each with its own series', async () => {
    const claims = new RateLimitingQueue({ name: 'claims', registry });
    const volumes = new RateLimitingQueue({ name: 'volumes', registry });
    claims.add('a');
    volumes.add('x');
    volumes.add('y');
    expect(await value(registry, 'workqueue_adds_total', 'claims')).toBe(1);
    expect(await value(registry, 'workqueue_adds_total', 'volumes')).toBe(2);
  });

  it('records nothing anywhere for a queue without a registry', () => {
    const queue = new RateLimitingQueue({ name: 'claims' });
    queue.add('a');
    expect(globalRegistry.getSingleMetric('workqueue_adds_total')).toBeUndefined();
  });
});
