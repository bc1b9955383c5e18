/**
 * The chart against the real control plane (RBAC on): its rendering is server-side applied and
 * accepted, the ServiceAccount gets exactly its grants, and a release of the upstream chart (rebuilt
 * from the recorded facts) is taken over in place, both by server-side apply and by the documented
 * `helm upgrade --reuse-values`, without touching an immutable field.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { applyManifests } from '@kube-provisioner/testenv';
import { helmBinary, isAllowed } from '@kube-provisioner/testenv/internal';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  AppsV1Api,
  CoreV1Api,
  type KubernetesObject,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  StorageV1Api,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderChart } from './support/chart-facts.ts';
import { type ChartCase, chartCases } from './support/chart-matrix.ts';
import { readUpstreamFixture } from './support/upstream-fixture.ts';
import { upstreamObjects } from './support/upstream-objects.ts';

const run = promisify(execFile);
const env = useTestEnv();
const objectsApi = env.kubeConfig.makeApiClient(KubernetesObjectApi);
const apps = env.kubeConfig.makeApiClient(AppsV1Api);
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const rbac = env.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const upstream = readUpstreamFixture();
const byId = (id: string): ChartCase => chartCases.find((c) => c.id === id) as ChartCase;
const upstreamImage = upstream.defaultValues.image as { repository: string; tag: string };
const ourImage = { repository: 'example.com/nfs-subdir-provisioner', tag: '0.1.0' };
const clusterScoped = new Set(['ClusterRole', 'ClusterRoleBinding', 'StorageClass', 'PersistentVolume']);
const cleanups: (() => Promise<unknown>)[] = [];
let helm = '';

beforeAll(async () => {
  helm = await helmBinary();
}, 900_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** Deletes the cluster-scoped objects after the file: the namespaces go by themselves. */
function deleteClusterScopedLater(objects: readonly KubernetesObject[]): void {
  const owned = objects.filter((o) => clusterScoped.has(o.kind ?? ''));
  cleanups.push(() => Promise.all(owned.map((o) => objectsApi.delete(o).catch(() => undefined))));
}

function allowed(user: string, namespace: string, group: string, resource: string, verb: string) {
  return isAllowed(env.kubeConfig, { user, namespace, group, resource, verb });
}

describe('the Helm chart on the control plane', () => {
  it('is accepted by server-side apply, and its ServiceAccount gets the provisioner grants only', async () => {
    const namespace = await env.namespace('chart');
    const release = uniqueName('nfs');
    const chartCase = byId('mount-options-pdb-labels');
    const objects = await renderChart(
      helm,
      chartDir,
      { ...chartCase, release },
      {
        namespace,
        overrides: { storageClass: { name: uniqueName('nfs-client') } },
      },
    );
    deleteClusterScopedLater(objects);
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'PersistentVolume',
      'PersistentVolumeClaim',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'ServiceAccount',
      'StorageClass',
    ]);
    await applyManifests(env.kubeConfig, objects);

    const user = `system:serviceaccount:${namespace}:${release}-nfs-subdir-external-provisioner`;
    for (const verb of ['get', 'watch', 'create', 'update']) {
      expect(await allowed(user, namespace, 'coordination.k8s.io', 'leases', verb), `leases ${verb}`).toBe(
        true,
      );
    }
    expect(await allowed(user, 'default', 'coordination.k8s.io', 'leases', 'update')).toBe(false);
    expect(await allowed(user, '', '', 'persistentvolumes', 'create')).toBe(true);
    expect(await allowed(user, 'any', '', 'persistentvolumeclaims', 'update')).toBe(false);
    expect(await allowed(user, namespace, '', 'endpoints', 'update')).toBe(false);
    expect(await allowed(user, namespace, '', 'secrets', 'get')).toBe(false);
  });

  it('server-side applies over an upstream release without an immutable-field error', async () => {
    const namespace = await env.namespace('chart-over');
    const chartCase = byId('mount-options-pdb-labels');
    const storageClassName = uniqueName('nfs-client');
    const nfs = (chartCase.values.nfs as { server: string; path: string }) ?? { server: '', path: '' };
    const before = upstreamObjects(upstream.cases[chartCase.id] ?? [], {
      namespace,
      image: `${upstreamImage.repository}:${upstreamImage.tag}`,
      nfs: { server: nfs.server, path: nfs.path },
      storageClassName,
    });
    deleteClusterScopedLater(before);
    await applyManifests(env.kubeConfig, before);

    const ours = await renderChart(helm, chartDir, chartCase, {
      namespace,
      overrides: { storageClass: { name: storageClassName }, image: ourImage },
    });
    await applyManifests(env.kubeConfig, ours);

    const deployment = await apps.readNamespacedDeployment({
      namespace,
      name: 'nfs-nfs-subdir-external-provisioner',
    });
    expect(deployment.spec?.selector.matchLabels).toEqual({
      app: 'nfs-subdir-external-provisioner',
      release: 'nfs',
    });
    expect(deployment.spec?.template.spec?.containers.map((c) => c.image)).toEqual([
      `${ourImage.repository}:${ourImage.tag}`,
    ]);
    const claim = await core.readNamespacedPersistentVolumeClaim({
      namespace,
      name: 'pvc-nfs-nfs-subdir-external-provisioner',
    });
    expect(claim.spec?.selector?.matchLabels).toEqual({
      'nfs-subdir-external-provisioner': 'nfs-nfs-subdir-external-provisioner',
    });
    expect((await storage.readStorageClass({ name: storageClassName })).provisioner).toBe(
      'cluster.local/nfs-nfs-subdir-external-provisioner',
    );
  });

  it('takes over an upstream release with helm upgrade --reuse-values, changing image and grants only', async () => {
    const namespace = await env.namespace('chart-helm');
    const release = 'nfs-subdir-external-provisioner';
    const storageClassName = uniqueName('nfs-client');
    const kube = ['--kubeconfig', env.kubeconfigPath, '--namespace', namespace];
    const standIn = await upstreamStandInChart(namespace, storageClassName);
    cleanups.push(() => run(helm, ['uninstall', release, ...kube]));
    cleanups.push(() => rm(standIn, { recursive: true, force: true }));
    // Upstream releases were installed by Helm 3 (client-side apply); Helm 4's upgrade keeps the method.
    await run(helm, [
      'install',
      release,
      standIn,
      ...kube,
      '--server-side=false',
      '--set',
      'nfs.server=10.0.0.5',
      '--set',
      'nfs.path=/export/k8s',
      '--set',
      `storageClass.name=${storageClassName}`,
    ]);
    const classBefore = await storage.readStorageClass({ name: storageClassName });
    const selectorBefore = (await apps.readNamespacedDeployment({ namespace, name: release })).spec?.selector;
    expect(classBefore.provisioner).toBe('cluster.local/nfs-subdir-external-provisioner');

    // The command the chart README documents.
    await run(helm, [
      'upgrade',
      release,
      chartDir,
      ...kube,
      '--reuse-values',
      '--set',
      `image.repository=${ourImage.repository}`,
      '--set',
      `image.tag=${ourImage.tag}`,
    ]);

    const classAfter = await storage.readStorageClass({ name: storageClassName });
    expect(classAfter.metadata?.uid).toBe(classBefore.metadata?.uid);
    expect(classAfter.provisioner).toBe(classBefore.provisioner);
    expect(classAfter.parameters).toEqual(classBefore.parameters);
    const deployment = await apps.readNamespacedDeployment({ namespace, name: release });
    expect(deployment.spec?.selector).toEqual(selectorBefore);
    const container = deployment.spec?.template.spec?.containers[0];
    expect(container?.name).toBe('nfs-subdir-external-provisioner');
    expect(container?.image).toBe(`${ourImage.repository}:${ourImage.tag}`);
    expect(container?.env).toContainEqual({
      name: 'PROVISIONER_NAME',
      value: 'cluster.local/nfs-subdir-external-provisioner',
    });
    expect(container?.env).toContainEqual({ name: 'NFS_SERVER', value: '10.0.0.5' });
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe(release);
    const role = await rbac.readNamespacedRole({ namespace, name: `leader-locking-${release}` });
    expect(role.rules?.map((r) => r.resources)).toEqual([['leases']]);
    const { stdout } = await run(helm, ['history', release, ...kube, '--output', 'json']);
    expect(
      (JSON.parse(stdout) as { revision: number; status: string }[]).map((r) => [r.revision, r.status]),
    ).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
  });
});

/**
 * A chart standing in for upstream's: upstream's name, version and default values, and as templates
 * the objects upstream's chart rendered for the default case (from the recorded facts).
 */
async function upstreamStandInChart(namespace: string, storageClassName: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'upstream-stand-in-'));
  await mkdir(join(dir, 'templates'));
  const { name, version, appVersion } = upstream.chart;
  await writeFile(join(dir, 'Chart.yaml'), JSON.stringify({ apiVersion: 'v2', name, version, appVersion }));
  await writeFile(join(dir, 'values.yaml'), JSON.stringify(upstream.defaultValues));
  const objects = upstreamObjects(upstream.cases.default ?? [], {
    namespace,
    image: `${upstreamImage.repository}:${upstreamImage.tag}`,
    nfs: { server: '10.0.0.5', path: '/export/k8s' },
    storageClassName,
  });
  await writeFile(
    join(dir, 'templates', 'release.yaml'),
    objects.map((o) => JSON.stringify(o)).join('\n---\n'),
  );
  return dir;
}
