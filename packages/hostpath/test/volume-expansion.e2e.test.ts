/**
 * End-to-end: the `kube-hostpath-provisioner` binary under the shipped RBAC grows a claim of a class
 * with `allowVolumeExpansion: true` on the real control plane (kube-controller-manager's expander
 * leaves such volumes to an external controller). Without enforced sizes the new size is bookkeeping:
 * the PV and the claim show it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyManifests, startProgram, waitFor, workspaceBinCommand } from '@kube-provisioner/testenv';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type KubernetesObject, loadAllYaml, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';
const timeoutMs = 90_000;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('records the new size on the PV and the claim when a claim of an expandable class grows', {
  timeout: 2 * timeoutMs,
}, async () => {
  const provisionerName = `e2e.kube-provisioner.io/${uniqueName('expand')}`;
  const className = uniqueName('hostpath-expand');
  const namespace = await env.namespace('hostpath-expand');
  const account = await env.serviceAccountKubeconfig({
    namespace: systemNamespace,
    name: 'hostpath-provisioner',
  });
  const root = await mkdtemp(join(tmpdir(), 'hostpath-expand-'));
  const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
  const program = await startProgram({
    command: cli.command,
    args: [...cli.args, '--mode=shared', `--provisioner-name=${provisionerName}`, `--root=${root}`],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: account.kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: systemNamespace,
    },
  });
  cleanups.push(async () => {
    await program.stop();
    await rm(root, { recursive: true, force: true });
  });
  await storage.createStorageClass({
    body: {
      metadata: { name: className },
      provisioner: provisionerName,
      volumeBindingMode: 'Immediate',
      allowVolumeExpansion: true,
    },
  });
  cleanups.push(async () => {
    await storage.deleteStorageClass({ name: className });
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'data' },
      spec: {
        storageClassName: className,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Mi' } },
      },
    },
  });
  const bound = await waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      return claim.status?.phase === 'Bound' ? claim : undefined;
    },
    { timeoutMs, description: 'the claim to be bound' },
  );
  expect(bound.status?.capacity?.storage).toBe('1Mi');

  await core.patchNamespacedPersistentVolumeClaim({
    namespace,
    name: 'data',
    // The client sends a JSON patch.
    body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '3Mi' }],
  });

  const resized = await waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      return claim.status?.capacity?.storage === '3Mi' ? claim : undefined;
    },
    { timeoutMs, description: 'the claim to show 3Mi' },
  );
  const pv = await core.readPersistentVolume({ name: resized.spec?.volumeName ?? '' });
  expect(pv.spec?.capacity?.storage).toBe('3Mi');
  expect(resized.status?.allocatedResourceStatuses ?? {}).toEqual({});
  const reasons = (await core.listNamespacedEvent({ namespace })).items
    .filter((event) => event.involvedObject.uid === resized.metadata?.uid)
    .map((event) => event.reason);
  expect(reasons).toContain('VolumeResizeSuccessful');
  expect(reasons).not.toContain('VolumeResizeFailed');
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
