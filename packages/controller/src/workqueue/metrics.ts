/**
 * Prometheus metrics of one work queue, under client-go's (component-base) names with label `name`.
 * All queues on a registry share one set of collectors, each queue writing its own `name` series.
 */
import { Counter, exponentialBuckets, Gauge, Histogram, type Metric, type Registry } from 'prom-client';
import type { Clock } from '../util/clock.ts';

/** 1e-8 s to 10 s by factors of 10, as client-go's workqueue histograms. */
const durationBuckets = exponentialBuckets(1e-8, 10, 10);
const labelNames = ['name'] as const;
type Label = (typeof labelNames)[number];

/** Finds the collector another queue already registered under `name`, or registers a new one. */
function shared<T extends Metric<Label>>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/** Records one queue's activity. Time is measured on the queue's clock. */
export class QueueMetrics {
  readonly #clock: Clock;
  readonly #depth: Gauge.Internal<Label>;
  readonly #adds: Counter.Internal;
  readonly #queueDuration: Histogram.Internal<Label>;
  readonly #workDuration: Histogram.Internal<Label>;
  readonly #unfinishedWork: Gauge.Internal<Label>;
  readonly #longestRunning: Gauge.Internal<Label>;
  readonly #retries: Counter.Internal;
  /** When each queued item was first added since it was last taken. */
  readonly #addedAt = new Map<string, number>();
  /** When each item being processed was taken. */
  readonly #takenAt = new Map<string, number>();

  constructor(registry: Registry, name: string, clock: Clock) {
    this.#clock = clock;
    const registers = [registry];
    const gauge = (metric: string, help: string): Gauge.Internal<Label> =>
      shared(registry, metric, () => new Gauge({ name: metric, help, labelNames, registers })).labels(name);
    const counter = (metric: string, help: string): Counter.Internal =>
      shared(registry, metric, () => new Counter({ name: metric, help, labelNames, registers })).labels(name);
    const histogram = (metric: string, help: string): Histogram.Internal<Label> =>
      shared(
        registry,
        metric,
        () => new Histogram({ name: metric, help, labelNames, registers, buckets: durationBuckets }),
      ).labels(name);

    this.#depth = gauge('workqueue_depth', 'Items waiting in the work queue.');
    this.#adds = counter('workqueue_adds_total', 'Items added to the work queue.');
    this.#queueDuration = histogram(
      'workqueue_queue_duration_seconds',
      'Seconds an item waits in the work queue before a worker takes it.',
    );
    this.#workDuration = histogram(
      'workqueue_work_duration_seconds',
      'Seconds a worker spends on an item taken from the work queue.',
    );
    this.#unfinishedWork = gauge(
      'workqueue_unfinished_work_seconds',
      'Summed seconds of the work in progress; a steady rise points at stuck workers.',
    );
    this.#longestRunning = gauge(
      'workqueue_longest_running_processor_seconds',
      'Seconds the longest-running worker of the work queue has spent on its item.',
    );
    this.#retries = counter('workqueue_retries_total', 'Delayed re-adds to the work queue.');
    // Series of a new queue exist from the start, at zero, without resetting a namesake's values.
    for (const series of [
      this.#depth,
      this.#adds,
      this.#unfinishedWork,
      this.#longestRunning,
      this.#retries,
    ]) {
      series.inc(0);
    }
  }

  /** An item entered the queue (after de-duplication). */
  add(item: string): void {
    this.#adds.inc();
    this.#depth.inc();
    if (!this.#addedAt.has(item)) this.#addedAt.set(item, this.#clock.now());
  }

  /** A worker took `item`. */
  get(item: string): void {
    const now = this.#clock.now();
    this.#depth.dec();
    const addedAt = this.#addedAt.get(item);
    if (addedAt !== undefined) {
      this.#queueDuration.observe(seconds(now - addedAt));
      this.#addedAt.delete(item);
    }
    this.#takenAt.set(item, now);
  }

  /** A worker finished `item`. */
  done(item: string): void {
    const takenAt = this.#takenAt.get(item);
    if (takenAt === undefined) return;
    this.#workDuration.observe(seconds(this.#clock.now() - takenAt));
    this.#takenAt.delete(item);
  }

  /** An item was scheduled for a delayed re-add. */
  retry(): void {
    this.#retries.inc();
  }

  /** Refreshes the unfinished-work gauges; the queue calls it periodically. */
  updateUnfinishedWork(): void {
    const now = this.#clock.now();
    let total = 0;
    let oldest = 0;
    for (const takenAt of this.#takenAt.values()) {
      const age = now - takenAt;
      total += age;
      oldest = Math.max(oldest, age);
    }
    this.#unfinishedWork.set(seconds(total));
    this.#longestRunning.set(seconds(oldest));
  }
}

function seconds(ms: number): number {
  return ms / 1000;
}
