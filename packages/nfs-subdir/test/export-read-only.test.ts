import { access } from 'node:fs/promises';
import type { KubeObject } from '@kube-provisioner/controller/client';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { reasonExportAvailable, reasonExportUnavailable } from '../src/export-health-events.ts';
import { ExportMetrics, exportMetricNames } from '../src/export-metrics.ts';
import { claim, context, provisioned, provisionOptions } from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nfs-0', namespace: 'storage' } };

describe('a read-only export', () => {
  it('is left out of placement, with its metric and event, until it is writable again', async () => {
    const registry = new Registry();
    const reasons: string[] = [];
    const readOnly = { b: true };
    const { dir, provisioner } = await twoExports({ a: 1 * gi, b: 5 * gi }, (exports) => ({
      metrics: new ExportMetrics(
        registry,
        exports.map((e) => e.name),
      ),
      events: { event: (_object, type, reason) => void reasons.push(`${type} ${reason}`) },
      pod,
      // b is mounted read-only: access(W_OK) says EROFS (root is no exception).
      writeProbe: async (path, mode) => {
        if (path === exports[1]?.mountRoot && readOnly.b) {
          throw Object.assign(new Error(`EROFS: read-only file system, access '${path}'`), { code: 'EROFS' });
        }
        await access(path, mode);
      },
    }));
    await using _ = dir;
    const up = async () =>
      (await registry.getSingleMetric(exportMetricNames.up)?.get())?.values.map((v) => v.value);

    // b has the most free space, but cannot take a volume.
    const first = provisioned(await provisioner.provision(provisionOptions(claim({ name: 'one' })), context));
    expect(first.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
    expect(await up()).toEqual([1, 0]);
    expect(reasons).toEqual([`Warning ${reasonExportUnavailable}`]);

    readOnly.b = false;
    const second = provisioned(
      await provisioner.provision(provisionOptions(claim({ name: 'two' })), context),
    );
    expect(second.spec?.nfs?.path.startsWith('/srv/b/')).toBe(true);
    expect(await up()).toEqual([1, 1]);
    expect(reasons).toEqual([`Warning ${reasonExportUnavailable}`, `Normal ${reasonExportAvailable}`]);
  });
});
