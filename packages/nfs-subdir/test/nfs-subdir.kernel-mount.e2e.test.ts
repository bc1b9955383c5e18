// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * End-to-end on a real kernel NFS client: the bundled `nfs-subdir-provisioner` (the image's app
 * layer) runs inside the test guest (User-Mode Linux) on a `mount -t nfs4` of a nfs-ganesha export,
 * as its pod runs under kubelet, against the real control plane under the example RBAC. Every
 * volume is reached the way a pod reaches it: a kernel mount of the PV's `server:path`.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { bindClaim, deleteClaimAndVolume } from '@kube-provisioner/testenv';
import { type GuestNfsDeployment, useTestEnv } from '@kube-provisioner/testenv/testing';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGuestExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useGuestExampleDeployment(env, 'subdir-kernel');
const { storageClass, entries, reachVolume } = provisioners;

function boundVolume(namespace: string, name: string, storageClassName: string): Promise<V1PersistentVolume> {
  return bindClaim(env.kubeConfig, { namespace, name, storageClassName });
}

function deleteClaim(pv: V1PersistentVolume): Promise<void> {
  return deleteClaimAndVolume(env.kubeConfig, pv);
}

function probeOnDisk(deployment: GuestNfsDeployment, relative: string): Promise<string> {
  return readFile(join(deployment.exportDir, relative, 'probe.txt'), 'utf8');
}

describe.skipIf(!provisioners.available())('nfs-subdir-provisioner on a kernel NFS mount', () => {
  let main: GuestNfsDeployment;

  beforeAll(async () => {
    main = await provisioners.deploy();
  });

  it('provisions a directory that a kernel mount of the PV writes into', async () => {
    const namespace = await env.namespace('kernel');
    const pv = await boundVolume(namespace, 'data', await storageClass(main));
    expect(pv.spec?.nfs?.server).toBe(main.endpoint.address);
    expect(await reachVolume(main, pv)).toBe(`${namespace}-data-${pv.metadata?.name}`);
  });

  it('archives through the mount: renamed beside itself with its data', async () => {
    const namespace = await env.namespace('kernel');
    const pv = await boundVolume(namespace, 'data', await storageClass(main, { onDelete: 'archive' }));
    const relative = await reachVolume(main, pv);
    await deleteClaim(pv);
    expect(await entries(main)).toContain(`archived-${relative}`);
    expect(await entries(main)).not.toContain(relative);
    expect(await probeOnDisk(main, `archived-${relative}`)).toBe(`probe for ${pv.metadata?.name}\n`);
  });

  it('deletes a nested volume and the parents it made through the mount', async () => {
    const namespace = await env.namespace('kernel');
    const className = await storageClass(main, {
      pathPattern: '${.PVC.namespace}/deep/${.PVC.name}',
      onDelete: 'delete',
    });
    const pv = await boundVolume(namespace, 'nested', className);
    expect(await reachVolume(main, pv)).toBe(`${namespace}/deep/nested`);
    await deleteClaim(pv);
    expect(await entries(main)).not.toContain(namespace);
  });

  it('retains the data and reattaches it to the claim re-created under the same name', async () => {
    const namespace = await env.namespace('kernel');
    const className = await storageClass(main, {
      pathPattern: '${.PVC.namespace}-${.PVC.name}',
      onDelete: 'retain',
      adoptExisting: 'true',
    });
    const first = await boundVolume(namespace, 'data', className);
    const relative = await reachVolume(main, first);
    await deleteClaim(first);
    expect(await probeOnDisk(main, relative)).toBe(`probe for ${first.metadata?.name}\n`);

    const second = await boundVolume(namespace, 'data', className);
    expect(second.spec?.nfs?.path).toBe(first.spec?.nfs?.path);
    expect(await probeOnDisk(main, relative)).toBe(`probe for ${first.metadata?.name}\n`);
  });

  it('works with NFS_PATH=/ on an export at the server root', async () => {
    const deployment = await provisioners.deploy({ exportPath: '/', nfsPath: '/' });
    const namespace = await env.namespace('kernel');
    const className = await storageClass(deployment, {
      pathPattern: '${.PVC.namespace}/${.PVC.name}',
      onDelete: 'delete',
    });
    const pv = await boundVolume(namespace, 'data', className);
    expect(pv.spec?.nfs?.path).toBe(posix.join('/', namespace, 'data'));
    expect(await reachVolume(deployment, pv)).toBe(`${namespace}/data`);
    await deleteClaim(pv);
    expect(await entries(deployment)).toEqual([]);
  });
});
