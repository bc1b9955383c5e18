import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const values = loadYaml<Record<string, unknown>>(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
const templates = readdirSync(join(chartDir, 'templates')).map((file) =>
  readFileSync(join(chartDir, 'templates', file), 'utf8'),
);

function valueAt(path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
}

describe('the Helm chart', () => {
  it('keeps the upstream chart values', () => {
    const upstream = [
      'replicaCount',
      'strategyType',
      'image.repository',
      'image.tag',
      'image.pullPolicy',
      'imagePullSecrets',
      'nfs.server',
      'nfs.path',
      'nfs.mountOptions',
      'nfs.volumeName',
      'nfs.reclaimPolicy',
      'storageClass.create',
      'storageClass.provisionerName',
      'storageClass.defaultClass',
      'storageClass.name',
      'storageClass.allowVolumeExpansion',
      'storageClass.reclaimPolicy',
      'storageClass.archiveOnDelete',
      'storageClass.onDelete',
      'storageClass.pathPattern',
      'storageClass.accessModes',
      'storageClass.volumeBindingMode',
      'storageClass.annotations',
      'leaderElection.enabled',
      'rbac.create',
      'podAnnotations',
      'priorityClassName',
      'podSecurityContext',
      'securityContext',
      'serviceAccount.create',
      'serviceAccount.annotations',
      'serviceAccount.name',
      'resources',
      'nodeSelector',
      'tolerations',
      'affinity',
      'labels',
      'podDisruptionBudget.enabled',
      'podDisruptionBudget.maxUnavailable',
    ];
    expect(upstream.filter((path) => valueAt(path) === undefined)).toEqual([]);
    expect(valueAt('nfs.path')).toBe('/nfs-storage');
    expect(valueAt('storageClass.name')).toBe('nfs-client');
  });

  it('does not advertise volume expansion and ships probes', () => {
    expect(valueAt('storageClass.allowVolumeExpansion')).toBe(false);
    expect(valueAt('livenessProbe.httpGet.path')).toBe('/healthz');
    expect(valueAt('readinessProbe.httpGet.path')).toBe('/readyz');
  });

  it('references only values that exist', () => {
    const referenced = new Set(
      templates.flatMap((text) => [...text.matchAll(/\.Values\.([\w.]+)/gu)].map((m) => m[1] ?? '')),
    );
    expect([...referenced].filter((path) => valueAt(path) === undefined)).toEqual([]);
  });

  it('grants the same rules as the kustomize manifests', () => {
    const rbacTemplate = templates.find((text) => text.includes('kind: ClusterRole')) ?? '';
    const deployRbac = readFileSync(join(import.meta.dirname, '..', 'deploy', 'rbac.yaml'), 'utf8');
    const rules = (text: string): string[] =>
      [...text.matchAll(/^ {2}- apiGroups: .*\n {4}resources: .*\n {4}verbs: .*$/gmu)].map((m) => m[0]);
    expect(rules(rbacTemplate)).toEqual(rules(deployRbac));
    expect(rules(rbacTemplate)).toHaveLength(5);
  });
});
