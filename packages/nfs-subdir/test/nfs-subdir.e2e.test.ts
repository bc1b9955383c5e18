// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * End-to-end: the `nfs-subdir-provisioner` bin, run as the example image runs it (under the example
 * RBAC through a ServiceAccount kubeconfig, `--mount-root` on the exported directory), against the
 * real control plane and a real NFS server (nfs-ganesha). Every PV is checked over NFS: a file
 * written to its `server:path` must land in exactly the directory the provisioner created.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { bindClaim, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import {
  type NfsProvisionerUnderTest,
  nfsToolsAvailable,
  reachVolumeOverNfs,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, StorageV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useExampleDeployment(env, 'nfs-subdir');
const { storageClass, entries } = provisioners;

type Deployment = NfsProvisionerUnderTest;

function boundVolume(namespace: string, name: string, storageClassName: string): Promise<V1PersistentVolume> {
  return bindClaim(env.kubeConfig, { namespace, name, storageClassName });
}

function reachOverNfs(deployment: Deployment, pv: V1PersistentVolume): Promise<string> {
  return reachVolumeOverNfs(deployment.server, pv);
}

function deleteClaim(pv: V1PersistentVolume): Promise<void> {
  return deleteClaimAndVolume(env.kubeConfig, pv);
}

describe.skipIf(!nfsToolsAvailable())('nfs-subdir-provisioner against nfs-ganesha', () => {
  let main: Deployment;

  beforeAll(async () => {
    main = await provisioners.deploy('/export');
  });

  it('binds a claim to a PV whose server:path is exactly the created directory', async () => {
    const namespace = await env.namespace('subdir');
    const pv = await boundVolume(namespace, 'data', await storageClass(main, {}));
    const relative = await reachOverNfs(main, pv);
    expect(relative).toBe(`${namespace}-data-${pv.metadata?.name}`);
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
  });

  it('archives by default: the directory is renamed beside itself with its data', async () => {
    const namespace = await env.namespace('subdir');
    const pv = await boundVolume(namespace, 'data', await storageClass(main, { archiveOnDelete: 'true' }));
    const relative = await reachOverNfs(main, pv);
    await deleteClaim(pv);
    expect(await entries(main, '')).toContain(`archived-${relative}`);
    expect(existsSync(join(main.server.exportDir, relative))).toBe(false);
    expect(await readFile(join(main.server.exportDir, `archived-${relative}`, 'probe.txt'), 'utf8')).toBe(
      `probe for ${pv.metadata?.name}\n`,
    );
  });

  it('deletes the directory with archiveOnDelete false or onDelete delete', async () => {
    for (const parameters of [{ archiveOnDelete: 'false' }, { onDelete: 'delete' }]) {
      const namespace = await env.namespace('subdir');
      const pv = await boundVolume(namespace, 'data', await storageClass(main, parameters));
      const relative = await reachOverNfs(main, pv);
      await deleteClaim(pv);
      expect(await entries(main, '')).not.toContain(relative);
      expect((await entries(main, '')).filter((name) => name.includes(relative))).toEqual([]);
    }
  });

  it('keeps the directory in place with onDelete retain', async () => {
    const namespace = await env.namespace('subdir');
    const pv = await boundVolume(namespace, 'data', await storageClass(main, { onDelete: 'retain' }));
    const relative = await reachOverNfs(main, pv);
    await deleteClaim(pv);
    expect(await readFile(join(main.server.exportDir, relative, 'probe.txt'), 'utf8')).toBe(
      `probe for ${pv.metadata?.name}\n`,
    );
  });

  it('reattaches retained data to the claim re-created under the same name (nfs-subdir#5)', async () => {
    const namespace = await env.namespace('subdir');
    const className = await storageClass(main, {
      pathPattern: '${.PVC.namespace}-${.PVC.name}',
      onDelete: 'retain',
      adoptExisting: 'true',
    });
    const first = await boundVolume(namespace, 'data', className);
    const relative = await reachOverNfs(main, first);
    expect(relative).toBe(`${namespace}-data`);
    await deleteClaim(first);

    const second = await boundVolume(namespace, 'data', className);

    expect(second.metadata?.name).not.toBe(first.metadata?.name);
    expect(second.spec?.nfs?.path).toBe(first.spec?.nfs?.path);
    expect(await readFile(join(main.server.exportDir, relative, 'probe.txt'), 'utf8')).toBe(
      `probe for ${first.metadata?.name}\n`,
    );
  });

  it('archives a nested pathPattern inside its own parent', async () => {
    const namespace = await env.namespace('subdir');
    const className = await storageClass(main, { pathPattern: '${.PVC.namespace}/${.PVC.name}' });
    const pv = await boundVolume(namespace, 'data', className);
    expect(await reachOverNfs(main, pv)).toBe(`${namespace}/data`);
    await deleteClaim(pv);
    expect(await entries(main, namespace)).toEqual(['archived-data']);
  });

  it('deletes a nested pathPattern and the parent it created, leaving a decoy of the same leaf name', async () => {
    const namespace = await env.namespace('subdir');
    const className = await storageClass(main, {
      pathPattern: '${.PVC.namespace}/deep/${.PVC.name}',
      onDelete: 'delete',
    });
    const decoy = await boundVolume(
      namespace,
      'data',
      await storageClass(main, { pathPattern: '${.PVC.name}' }),
    );
    expect(await reachOverNfs(main, decoy)).toBe('data');
    const pv = await boundVolume(namespace, 'nested', className);
    expect(await reachOverNfs(main, pv)).toBe(`${namespace}/deep/nested`);
    await deleteClaim(pv);
    expect(existsSync(join(main.server.exportDir, namespace))).toBe(false);
    expect(await readFile(join(main.server.exportDir, 'data', 'probe.txt'), 'utf8')).toBe(
      `probe for ${decoy.metadata?.name}\n`,
    );
  });

  it('records a resize on the PV and the claim, keeping the data, and refuses to shrink', async () => {
    const namespace = await env.namespace('subdir');
    const className = await storageClass(main, { onDelete: 'delete' });
    const classes = env.kubeConfig.makeApiClient(StorageV1Api);
    const created = await classes.readStorageClass({ name: className });
    await classes.replaceStorageClass({ name: className, body: { ...created, allowVolumeExpansion: true } });
    const pv = await boundVolume(namespace, 'data', className);
    const relative = await reachOverNfs(main, pv);
    const core = env.kubeConfig.makeApiClient(CoreV1Api);
    const request = async (storage: string) => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      await core.replaceNamespacedPersistentVolumeClaim({
        namespace,
        name: 'data',
        body: { ...claim, spec: { ...claim.spec, resources: { requests: { storage } } } },
      });
    };

    await request('3Gi');

    const name = pv.metadata?.name ?? '';
    await waitFor(
      async () => {
        const [volume, claim] = await Promise.all([
          core.readPersistentVolume({ name }),
          core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' }),
        ]);
        return volume.spec?.capacity?.storage === '3Gi' && claim.status?.capacity?.storage === '3Gi'
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, description: 'the PV and the claim to hold 3Gi' },
    );
    expect(await readFile(join(main.server.exportDir, relative, 'probe.txt'), 'utf8')).toBe(
      `probe for ${name}\n`,
    );
    // The API server refuses a request below the claim's capacity itself.
    await expect(request('1Gi')).rejects.toThrow(/must be greater than or equal|can not be less than/u);
    await deleteClaim(pv);
  });

  it.each([
    ['/', '/'],
    ['/export/', '/export'],
  ])('works with NFS_PATH=%s', async (nfsPath, exportPath) => {
    const deployment = await provisioners.deploy(exportPath, nfsPath);
    const namespace = await env.namespace('subdir');
    const className = await storageClass(deployment, {
      pathPattern: '${.PVC.namespace}/${.PVC.name}',
      onDelete: 'delete',
    });
    const pv = await boundVolume(namespace, 'data', className);
    expect(pv.spec?.nfs?.path).toBe(posix.join(exportPath, namespace, 'data'));
    expect(await reachOverNfs(deployment, pv)).toBe(`${namespace}/data`);
    await deleteClaim(pv);
    expect(await entries(deployment, '')).toEqual([]);
  });
});
