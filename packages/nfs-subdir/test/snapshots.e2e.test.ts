/**
 * End-to-end: the `nfs-subdir-provisioner` bin, under the example RBAC and with the example's CRD,
 * against the real control plane and a real NFS server: snapshots a claim into the export's snapshot
 * area, `kubectl get directorysnapshots` shows it ready, a claim whose `dataSourceRef` names it gets
 * the content it had when taken, and deleting it removes its data.
 */
import { execFile } from 'node:child_process';
import { chmod, link, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { type DirectorySnapshot, snapshotFinalizer } from '@kube-provisioner/controller/snapshot';
import { snapshotPath } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { applyManifests, bindClaim, waitFor } from '@kube-provisioner/testenv';
import { nfsToolsAvailable, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  loadAllYaml,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useExampleDeployment(env, 'nfs-snap');
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
const timeoutMs = 60_000;
const group = 'snapshot.kube-provisioner.io';
const resource = { group, version: 'v1alpha1', plural: 'directorysnapshots' };
const crdFile = join(import.meta.dirname, '..', '..', '..', 'examples', 'nfs', 'deploy', 'snapshot-crd.yaml');

beforeAll(async () => {
  await applyManifests(env.kubeConfig, loadAllYaml(await readFile(crdFile, 'utf8')) as KubernetesObject[]);
  await waitFor(
    () =>
      custom.listClusterCustomObject(resource).then(
        () => true,
        () => false,
      ),
    { timeoutMs, description: 'the DirectorySnapshot CRD to be served' },
  );
});

describe.skipIf(!nfsToolsAvailable())('DirectorySnapshots with nfs-subdir-provisioner', () => {
  it('takes one, lists it ready, restores it with the content it had, and deletes its data', {
    timeout: 5 * timeoutMs,
  }, async () => {
    const deployment = await provisioners.deploy('/export');
    const storageClassName = await provisioners.storageClass(deployment, { onDelete: 'delete' });
    const namespace = await env.namespace('snap');
    const exportDir = (pv: V1PersistentVolume) =>
      join(
        deployment.server.exportDir,
        posix.relative(deployment.server.exportPath, pv.spec?.nfs?.path ?? ''),
      );
    const source = await bindClaim(env.kubeConfig, { namespace, name: 'src', storageClassName });
    const sourceDir = exportDir(source);
    await mkdir(join(sourceDir, 'sub'));
    await writeFile(join(sourceDir, 'sub/a.txt'), 'alpha');
    await writeFile(join(sourceDir, 'big.bin'), Buffer.alloc(300_000, 3));
    await link(join(sourceDir, 'sub/a.txt'), join(sourceDir, 'hard'));
    await symlink('/etc', join(sourceDir, 'out'));
    await chmod(join(sourceDir, 'sub'), 0o750);
    const taken = await treeSnapshot(sourceDir);

    await custom.createNamespacedCustomObject({
      ...resource,
      namespace,
      body: {
        apiVersion: `${group}/v1alpha1`,
        kind: 'DirectorySnapshot',
        metadata: { name: 'snap' },
        spec: { source: { persistentVolumeClaimName: 'src' } },
      },
    });
    const readSnapshot = async () =>
      (await custom.getNamespacedCustomObject({ ...resource, namespace, name: 'snap' })) as DirectorySnapshot;
    const ready = await waitFor(
      async () => {
        const snapshot = await readSnapshot();
        return snapshot.status?.readyToUse === true ? snapshot : undefined;
      },
      { timeoutMs, description: 'the snapshot to be ready' },
    );
    expect(ready.metadata?.finalizers).toContain(snapshotFinalizer);
    const dataDir = join(deployment.server.exportDir, snapshotPath(namespace, ready.metadata?.uid ?? ''));
    expect(await treeSnapshot(dataDir)).toEqual(taken);
    // Written after the snapshot: the restore must not see it.
    await writeFile(join(sourceDir, 'sub/a.txt'), 'changed after the snapshot');

    // As a user lists them: the CRD's printer columns.
    const { stdout } = await promisify(execFile)('kubectl', [
      '--kubeconfig',
      env.kubeconfigPath,
      'get',
      'directorysnapshots',
      '--namespace',
      namespace,
    ]);
    const [header, row] = stdout.trim().split('\n');
    expect(header?.split(/\s+/u)).toEqual([
      'NAME',
      'READY',
      'SOURCE',
      'RESTORESIZE',
      'DELETIONPOLICY',
      'AGE',
    ]);
    expect(row?.split(/\s+/u).slice(0, 4)).toEqual(['snap', 'true', 'src', '1Gi']);

    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'restored' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
          dataSourceRef: { apiGroup: group, kind: 'DirectorySnapshot', name: 'snap' },
        },
      },
    });
    const restored = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'restored' });
        const volumeName = claim.spec?.volumeName;
        return claim.status?.phase === 'Bound' && volumeName
          ? core.readPersistentVolume({ name: volumeName })
          : undefined;
      },
      { timeoutMs, description: 'the restored claim to be bound' },
    );
    expect(await treeSnapshot(exportDir(restored))).toEqual(taken);
    expect((await readSnapshot()).metadata?.finalizers ?? []).not.toContain(finalizerCloningProtection);

    await custom.deleteNamespacedCustomObject({ ...resource, namespace, name: 'snap' });
    await waitFor(
      () =>
        readSnapshot().then(
          () => false,
          () => true,
        ),
      { timeoutMs, description: 'the deleted snapshot to be gone' },
    );
    await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    // The restored claim's copy is its own: the snapshot's removal left it whole.
    expect(await treeSnapshot(exportDir(restored))).toEqual(taken);
    expect(deployment.program.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
