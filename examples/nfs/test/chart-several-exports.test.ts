/**
 * The chart with `nfs.exports`: one release serving several exports renders `NFS_EXPORTS` (which the
 * program parses) and one nfs volume per export, mounted where the list says; with `nfs.server` too
 * it refuses to render. Without `nfs.exports` the rendering is upstream's (chart-upstream-names.test.ts).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseExportList } from '@kube-provisioner/nfs-subdir';
import { helmBinary } from '@kube-provisioner/testenv/internal';
import type { V1Deployment } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderChart } from './support/chart-facts.ts';
import { type ChartCase, chartCases } from './support/chart-matrix.ts';

const run = promisify(execFile);
const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const byId = (id: string): ChartCase => chartCases.find((c) => c.id === id) as ChartCase;
const exports = [
  { name: 'fast', server: '10.0.0.10', path: '/srv/nfs' },
  { name: 'big', server: '10.0.0.20', path: '/export/k8s' },
];
let helm = '';

beforeAll(async () => {
  helm = await helmBinary();
}, 900_000);

describe('the chart with nfs.exports', () => {
  it('renders NFS_EXPORTS, POD_NAME and one nfs volume per export, mounted at /persistentvolumes/<name>', async () => {
    const objects = await renderChart(helm, chartDir, byId('default'), {
      overrides: { nfs: { server: '', exports } },
    });
    const pod = (objects.find((o) => o.kind === 'Deployment') as V1Deployment).spec?.template.spec;
    const container = pod?.containers[0];
    const env = container?.env ?? [];
    expect(env.map((e) => e.name)).not.toContain('NFS_SERVER');
    expect(env.map((e) => e.name)).not.toContain('NFS_PATH');
    const value = env.find((e) => e.name === 'NFS_EXPORTS')?.value ?? '';
    expect(parseExportList(value)).toEqual([
      { ...exports[0], mountRoot: '/persistentvolumes/fast' },
      { ...exports[1], mountRoot: '/persistentvolumes/big' },
    ]);
    // The export health Events go on the Pod.
    expect(env.find((e) => e.name === 'POD_NAME')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'metadata.name' },
    });
    expect(container?.volumeMounts).toEqual([
      { name: 'export-fast', mountPath: '/persistentvolumes/fast' },
      { name: 'export-big', mountPath: '/persistentvolumes/big' },
    ]);
    expect(pod?.volumes).toEqual([
      { name: 'export-fast', nfs: { server: '10.0.0.10', path: '/srv/nfs' } },
      { name: 'export-big', nfs: { server: '10.0.0.20', path: '/export/k8s' } },
    ]);
  });

  it("passes each export's weight and labels to the program as given, and nothing where an export has none", async () => {
    const weighted = [
      { ...exports[0], weight: 3, labels: { disk: 'ssd', 'example.com/zone': 'a' } },
      { ...exports[1], labels: {} },
      { name: 'plain', server: '10.0.0.30', path: '/srv/plain' },
    ];
    const objects = await renderChart(helm, chartDir, byId('default'), {
      overrides: { nfs: { server: '', exports: weighted } },
    });
    const env = (objects.find((o) => o.kind === 'Deployment') as V1Deployment).spec?.template.spec
      ?.containers[0]?.env;
    const value = env?.find((e) => e.name === 'NFS_EXPORTS')?.value ?? '';
    expect(parseExportList(value)).toEqual([
      { ...weighted[0], mountRoot: '/persistentvolumes/fast' },
      { ...weighted[1], mountRoot: '/persistentvolumes/big' },
      { ...weighted[2], mountRoot: '/persistentvolumes/plain' },
    ]);
  });

  it('refuses nfs.exports together with nfs.server', async () => {
    const set = ['--set', 'nfs.server=10.0.0.5', '--set', 'nfs.exports[0].name=a'];
    await expect(run(helm, ['template', 'nfs', chartDir, ...set])).rejects.toThrow(
      /nfs\.exports replaces nfs\.server and nfs\.path/u,
    );
  });

  it('lints clean with --strict', async () => {
    const set = [
      '--set',
      'nfs.exports[0].name=a',
      '--set',
      'nfs.exports[0].server=s',
      '--set',
      'nfs.exports[0].path=/x',
    ];
    await expect(run(helm, ['lint', '--strict', chartDir, ...set])).resolves.toMatchObject({
      stdout: expect.stringContaining('1 chart(s) linted, 0 chart(s) failed'),
    });
  });
});
