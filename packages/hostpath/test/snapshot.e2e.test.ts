/**
 * End-to-end: the `kube-hostpath-provisioner` binary (shared mode, shipped RBAC and CRD) snapshots a
 * claim (with a `SnapshotReady` event), restores the snapshot into a new claim with the content it had
 * when taken, makes a claim naming a snapshot that is not ready wait with an event, and removes a
 * deleted snapshot's data.
 */
import { chmod, link, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { type DirectorySnapshot, snapshotFinalizer } from '@kube-provisioner/controller/snapshot';
import { snapshotPath } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { applyManifests, waitFor } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  loadAllYaml,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { beforeAll, expect, it } from 'vitest';
import { useSharedCli } from './shared-cli.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
const startCli = useSharedCli(env);
const timeoutMs = 30_000;
const group = 'snapshot.kube-provisioner.io';
const resource = { group, version: 'v1alpha1', plural: 'directorysnapshots' };

beforeAll(async () => {
  const crd = await readFile(join(import.meta.dirname, '..', 'deploy', 'snapshot-crd.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(crd) as KubernetesObject[]);
  await waitFor(
    () =>
      custom.listClusterCustomObject(resource).then(
        () => true,
        () => false,
      ),
    { timeoutMs, description: 'the DirectorySnapshot CRD to be served' },
  );
});

it('snapshots a claim, restores it with the content it had, waits for a snapshot not ready, deletes its data', {
  timeout: 4 * timeoutMs,
}, async () => {
  const { namespace, className, root, program, bindClaim } = await startCli({ prefix: 'snap', timeoutMs });
  const readSnapshot = async (name: string) =>
    (await custom.getNamespacedCustomObject({ ...resource, namespace, name })) as DirectorySnapshot;
  const createSnapshot = (name: string, claim: string) =>
    custom.createNamespacedCustomObject({
      ...resource,
      namespace,
      body: {
        apiVersion: `${group}/v1alpha1`,
        kind: 'DirectorySnapshot',
        metadata: { name },
        spec: { source: { persistentVolumeClaimName: claim } },
      },
    });
  const createRestore = (name: string, snapshot: string) =>
    core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name },
        spec: {
          storageClassName: className,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Mi' } },
          dataSourceRef: { apiGroup: group, kind: 'DirectorySnapshot', name: snapshot },
        },
      },
    });
  const boundVolume = (name: string) =>
    waitFor(
      async (): Promise<V1PersistentVolume | undefined> => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
        const volumeName = claim.spec?.volumeName;
        return claim.status?.phase === 'Bound' && volumeName
          ? core.readPersistentVolume({ name: volumeName })
          : undefined;
      },
      { timeoutMs, description: `claim ${name} to be bound` },
    );

  const source = await bindClaim('src', '1Mi');
  const sourceDir = source.spec?.hostPath?.path ?? '';
  await mkdir(join(sourceDir, 'sub'));
  await writeFile(join(sourceDir, 'sub/a.txt'), 'alpha');
  await link(join(sourceDir, 'sub/a.txt'), join(sourceDir, 'hard'));
  await chmod(join(sourceDir, 'sub'), 0o750);
  const taken = await treeSnapshot(sourceDir);

  await createSnapshot('snap', 'src');
  const ready = await waitFor(
    async () => {
      const snapshot = await readSnapshot('snap');
      return snapshot.status?.readyToUse === true ? snapshot : undefined;
    },
    { timeoutMs, description: 'the snapshot to be ready' },
  );
  expect(ready.status?.restoreSize).toBe('1Mi');
  expect(Date.parse(ready.status?.creationTime ?? '')).not.toBeNaN();
  expect(ready.metadata?.finalizers).toContain(snapshotFinalizer);
  const dataDir = join(root, snapshotPath(namespace, ready.metadata?.uid ?? ''));
  expect(await treeSnapshot(dataDir)).toEqual(taken);
  const told = await waitFor(
    async () =>
      (
        await core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.name=snap,reason=SnapshotReady',
        })
      ).items[0],
    { timeoutMs, description: 'the SnapshotReady event on the snapshot' },
  );
  expect(told.involvedObject.kind).toBe('DirectorySnapshot');
  expect(told.message).toContain(`snapshot of claim ${namespace}/src taken`);
  // Written after the snapshot: the restore must not see it.
  await writeFile(join(sourceDir, 'sub/a.txt'), 'changed after the snapshot');

  // A claim naming a snapshot that is not ready (its source claim does not exist) waits, saying why.
  await createSnapshot('pending', 'no-such-claim');
  await createRestore('waits', 'pending');
  const waiting = await waitFor(
    async () =>
      (
        await core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.name=waits,reason=ProvisioningFailed',
        })
      ).items[0],
    { timeoutMs, description: 'an event on the claim waiting for its snapshot' },
  );
  expect(waiting.message).toContain(`snapshot ${namespace}/pending is not ready to use yet`);

  await createRestore('restored', 'snap');
  const restored = await boundVolume('restored');
  expect(await treeSnapshot(restored.spec?.hostPath?.path ?? '')).toEqual(taken);
  expect((await readSnapshot('snap')).metadata?.finalizers ?? []).not.toContain(finalizerCloningProtection);

  await custom.deleteNamespacedCustomObject({ ...resource, namespace, name: 'snap' });
  await waitFor(
    () =>
      readSnapshot('snap').then(
        () => false,
        () => true,
      ),
    { timeoutMs, description: 'the deleted snapshot to be gone' },
  );
  await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
