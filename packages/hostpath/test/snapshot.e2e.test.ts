/**
 * End-to-end: the `kube-hostpath-provisioner` binary (shared mode, shipped RBAC and CRD) snapshots a
 * claim (with a `SnapshotReady` event), restores the snapshot into a new claim with the content it had
 * when taken, makes a claim naming a snapshot that is not ready wait with an event, and removes a
 * deleted snapshot's data; a class's `snapshotsPerClaim` deletes a claim's oldest snapshot and its data.
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

const readSnapshotIn = async (namespace: string, name: string) =>
  (await custom.getNamespacedCustomObject({ ...resource, namespace, name })) as DirectorySnapshot;
const createSnapshotIn = (namespace: string, name: string, claim: string) =>
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
const readySnapshot = (namespace: string, name: string) =>
  waitFor(
    async () => {
      const snapshot = await readSnapshotIn(namespace, name);
      return snapshot.status?.readyToUse === true ? snapshot : undefined;
    },
    { timeoutMs, description: `snapshot ${name} to be ready` },
  );

it('snapshots a claim, restores it with the content it had, waits for a snapshot not ready, deletes its data', {
  timeout: 4 * timeoutMs,
}, async () => {
  const { namespace, className, root, program, bindClaim } = await startCli({ prefix: 'snap', timeoutMs });
  const readSnapshot = (name: string) => readSnapshotIn(namespace, name);
  const createSnapshot = (name: string, claim: string) => createSnapshotIn(namespace, name, claim);
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

it('deletes the oldest snapshot of a claim, and its data, once a newer one exceeds the class’s snapshotsPerClaim', {
  timeout: 4 * timeoutMs,
}, async () => {
  const { namespace, root, program, bindClaim } = await startCli({
    prefix: 'snapbound',
    timeoutMs,
    storageClass: { parameters: { snapshotsPerClaim: '1' } },
  });
  const source = await bindClaim('src', '1Mi');
  await writeFile(join(source.spec?.hostPath?.path ?? '', 'a.txt'), 'alpha');
  await createSnapshotIn(namespace, 'first', 'src');
  const first = await readySnapshot(namespace, 'first');
  const firstDir = join(root, snapshotPath(namespace, first.metadata?.uid ?? ''));
  expect(await readFile(join(firstDir, 'a.txt'), 'utf8')).toBe('alpha');

  await createSnapshotIn(namespace, 'second', 'src');
  const second = await readySnapshot(namespace, 'second');

  await waitFor(
    () =>
      readSnapshotIn(namespace, 'first').then(
        () => false,
        () => true,
      ),
    { timeoutMs, description: 'the oldest snapshot to be deleted' },
  );
  await expect(stat(firstDir)).rejects.toMatchObject({ code: 'ENOENT' });
  const secondDir = join(root, snapshotPath(namespace, second.metadata?.uid ?? ''));
  expect(await readFile(join(secondDir, 'a.txt'), 'utf8')).toBe('alpha');
  expect((await readSnapshotIn(namespace, 'second')).status?.readyToUse).toBe(true);
  const expired = await waitFor(
    async () =>
      (
        await core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.name=first,reason=SnapshotExpired',
        })
      ).items[0],
    { timeoutMs, description: 'the SnapshotExpired event on the oldest snapshot' },
  );
  expect(expired.message).toContain(`claim ${namespace}/src keeps its newest 1 snapshots`);
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
