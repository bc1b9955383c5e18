import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CloneMetrics } from '../src/clone/clone-metrics.ts';
import { cloneMetricNames } from '../src/clone/index.ts';
import { metricValue } from '../src/testing/metric-samples.ts';

describe('clone metrics of several clone jobs', () => {
  it('count on one set of series per registry', async () => {
    const registry = new Registry();
    const first = new CloneMetrics(registry);
    const second = new CloneMetrics(registry);
    first.started();
    second.started();
    second.advanced({ entries: 0, bytes: 0, skipped: 0 }, { entries: 1, bytes: 7, skipped: 0 });
    expect(await metricValue(registry, cloneMetricNames.running, {})).toBe(2);
    second.ended('succeeded');
    first.ended('failed');
    expect(await metricValue(registry, cloneMetricNames.running, {})).toBe(0);
    expect(await metricValue(registry, cloneMetricNames.bytes, {})).toBe(7);
    expect(await metricValue(registry, cloneMetricNames.ended, { result: 'succeeded' })).toBe(1);
    expect(await metricValue(registry, cloneMetricNames.ended, { result: 'failed' })).toBe(1);
  });
});
