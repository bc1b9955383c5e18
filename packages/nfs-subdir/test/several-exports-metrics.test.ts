import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ExportMetrics, exportMetricNames } from '../src/export-metrics.ts';
import { claim, context, provisioned, provisionOptions } from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

/** Each series of `metric` as `export → value`. */
async function byExport(registry: Registry, metric: string): Promise<Record<string, number>> {
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  return Object.fromEntries(values.map((value) => [String(value.labels.export), value.value]));
}

describe('per-export metrics', () => {
  it('publish each export’s size, free space and health at placement and maintenance, and count placements', async () => {
    const registry = new Registry();
    const free: Record<string, number> = { a: 2 * gi, b: 5 * gi };
    const { dir, provisioner } = await twoExports(free, (exports) => ({
      metrics: new ExportMetrics(
        registry,
        exports.map((e) => e.name),
      ),
    }));
    await using _ = dir;
    expect(await byExport(registry, exportMetricNames.placements)).toEqual({ a: 0, b: 0 });

    provisioned(await provisioner.provision(provisionOptions(claim()), context));
    expect(await byExport(registry, exportMetricNames.placements)).toEqual({ a: 0, b: 1 });
    expect(await byExport(registry, exportMetricNames.free)).toEqual({ a: 2 * gi, b: 5 * gi });
    expect(await byExport(registry, exportMetricNames.capacity)).toEqual({ a: 4 * gi, b: 10 * gi });
    expect(await byExport(registry, exportMetricNames.up)).toEqual({ a: 1, b: 1 });

    // b stops answering: the next maintenance run says so and keeps its last known figures.
    delete free.b;
    free.a = 1 * gi;
    await provisioner.maintain(context);
    expect(await byExport(registry, exportMetricNames.up)).toEqual({ a: 1, b: 0 });
    expect(await byExport(registry, exportMetricNames.free)).toEqual({ a: 1 * gi, b: 5 * gi });
  });
});
