/**
 * The chart as `helm lint --strict` and `helm template` see it, with the pinned helm: it lints clean,
 * accepts every upstream values key, refuses a missing NFS server with a message naming the value,
 * grants exactly the provisioner's RBAC rules, and still renders its probes and Lease grant from
 * upstream's values alone (what `helm upgrade --reuse-values` of an upstream release hands it).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterRules, namespaceRules } from '@kube-provisioner/nfs-subdir';
import { helmBinary } from '@kube-provisioner/testenv/internal';
import { type KubernetesObject, loadYaml, type V1Deployment, type V1Role } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderChart } from './support/chart-facts.ts';
import { type ChartCase, chartCases } from './support/chart-matrix.ts';
import { readUpstreamFixture } from './support/upstream-fixture.ts';

const run = promisify(execFile);
const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const values = loadYaml<Record<string, unknown>>(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
const upstream = readUpstreamFixture();
const byId = (id: string): ChartCase => chartCases.find((c) => c.id === id) as ChartCase;
let helm = '';

beforeAll(async () => {
  helm = await helmBinary();
}, 900_000);

function keyPaths(node: unknown, prefix = ''): string[] {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return [prefix];
  const entries = Object.entries(node as Record<string, unknown>);
  if (entries.length === 0) return [prefix];
  return entries.flatMap(([key, value]) => keyPaths(value, prefix ? `${prefix}.${key}` : key));
}

function valueAt(path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
}

function find<T>(objects: readonly KubernetesObject[], kind: string): T {
  const object = objects.find((o) => o.kind === kind);
  if (!object) throw new Error(`no ${kind} rendered`);
  return object as T;
}

describe('helm lint and template', () => {
  it('lints clean with --strict, with a server and with upstream CI values', async () => {
    const lint = (...args: string[]) => run(helm, ['lint', '--strict', chartDir, ...args]);
    await expect(lint('--set', 'nfs.server=10.0.0.5')).resolves.toMatchObject({
      stdout: expect.stringContaining('1 chart(s) linted, 0 chart(s) failed'),
    });
    // Upstream's own CI values: no server, build mode, PodSecurityPolicy on.
    await expect(
      lint('--set', 'buildMode=true', '--set', 'podSecurityPolicy.enabled=true'),
    ).resolves.toMatchObject({
      stdout: expect.stringContaining('1 chart(s) linted, 0 chart(s) failed'),
    });
  });

  it('refuses to render without nfs.server, naming the value', async () => {
    await expect(run(helm, ['template', 'nfs', chartDir])).rejects.toThrow(/nfs\.server is required/);
  });

  it('accepts every key of the upstream values, and references only keys it declares', () => {
    const upstreamKeys = keyPaths(upstream.defaultValues).filter((path) => path !== '');
    expect(upstreamKeys.length).toBeGreaterThan(30);
    expect(
      upstreamKeys.filter(
        (path) =>
          !keyPaths(values).some(
            (ours) => ours === path || ours.startsWith(`${path}.`) || path.startsWith(`${ours}.`),
          ),
      ),
    ).toEqual([]);
    const templates = readdirSync(join(chartDir, 'templates')).map((file) =>
      readFileSync(join(chartDir, 'templates', file), 'utf8'),
    );
    const referenced = new Set(
      templates.flatMap((text) => [...text.matchAll(/\.Values\.([\w.]+)/gu)].map((m) => m[1] ?? '')),
    );
    expect([...referenced].filter((path) => valueAt(path) === undefined)).toEqual([]);
  });

  it('grants exactly the provisioner rules: cluster rules and the Lease in the release namespace', async () => {
    const objects = await renderChart(helm, chartDir, byId('default'));
    expect(find<{ rules: unknown }>(objects, 'ClusterRole').rules).toEqual(clusterRules);
    expect(find<V1Role>(objects, 'Role').rules).toEqual(namespaceRules);
    const withoutElection = await renderChart(helm, chartDir, byId('no-leader-election'));
    expect(find<V1Role>(withoutElection, 'Role').rules ?? []).toEqual([]);
  });

  it('grants PodSecurityPolicy use only where the cluster serves it', async () => {
    const served = await renderChart(helm, chartDir, byId('psp-served'));
    expect(served.map((o) => o.kind)).toContain('PodSecurityPolicy');
    expect(find<{ rules: unknown[] }>(served, 'ClusterRole').rules).toContainEqual({
      apiGroups: ['policy'],
      resources: ['podsecuritypolicies'],
      verbs: ['use'],
      resourceNames: ['nfs-nfs-subdir-external-provisioner'],
    });
    const removed = await renderChart(helm, chartDir, byId('psp'));
    expect(removed.map((o) => o.kind)).not.toContain('PodSecurityPolicy');
    expect(find<{ rules: unknown[] }>(removed, 'ClusterRole').rules).toEqual(clusterRules);
  });

  it('renders probes, the metrics port and the Lease grant from upstream values alone', async () => {
    const objects = await renderChart(helm, chartDir, byId('default'), {
      chartValues: upstream.defaultValues,
      overrides: { image: { repository: 'example.com/nfs', tag: '0.1.0' } },
    });
    const container = find<V1Deployment>(objects, 'Deployment').spec?.template.spec?.containers[0];
    expect(container?.image).toBe('example.com/nfs:0.1.0');
    expect(container?.ports).toEqual([{ name: 'metrics', containerPort: 8080 }]);
    expect(container?.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(container?.env).toContainEqual({ name: 'METRICS_PORT', value: '8080' });
    expect(container?.securityContext).toBeUndefined();
    expect(find<V1Role>(objects, 'Role').rules).toEqual(namespaceRules);
  });
});
