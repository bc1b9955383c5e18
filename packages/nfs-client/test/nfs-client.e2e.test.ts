/**
 * End-to-end: the `nfs-client-provisioner` bin, run as a container would run it (under the example
 * RBAC through a ServiceAccount kubeconfig, `--mount-root` on the exported directory), against the
 * real control plane and a real NFS server (nfs-ganesha), checking every PV over NFS.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bindClaim, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import {
  type NfsProvisionerUnderTest,
  nfsToolsAvailable,
  reachVolumeOverNfs,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const timeoutMs = 90_000;
const provisioners = useExampleDeployment(env, 'nfs-client');

/** Binds claim `data` in a new namespace through a new StorageClass of `deployment`. */
async function bindData(
  deployment: NfsProvisionerUnderTest,
  parameters: Record<string, string> = {},
): Promise<{ namespace: string; pv: V1PersistentVolume }> {
  const namespace = await env.namespace('client');
  const storageClassName = await provisioners.storageClass(deployment, parameters);
  const pv = await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName, timeoutMs });
  return { namespace, pv };
}

describe.skipIf(!nfsToolsAvailable())('nfs-client-provisioner against nfs-ganesha', () => {
  let main: NfsProvisionerUnderTest;

  beforeAll(async () => {
    main = await provisioners.deploy('/export');
  });

  it('binds claims to <namespace>-<claim>-<pv> directories reachable at the PV server:path', async () => {
    const { namespace, pv } = await bindData(main);
    expect(await reachVolumeOverNfs(main.server, pv)).toBe(`${namespace}-data-${pv.metadata?.name}`);
    expect(pv.spec?.nfs?.path).toBe(`/export/${namespace}-data-${pv.metadata?.name}`);
  });

  it('archives to archived-<dir> at the export root by default, keeping the data', async () => {
    const { pv } = await bindData(main);
    const dir = await reachVolumeOverNfs(main.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect(await provisioners.entries(main)).toContain(`archived-${dir}`);
    expect(existsSync(join(main.server.exportDir, dir))).toBe(false);
    expect(await readFile(join(main.server.exportDir, `archived-${dir}`, 'probe.txt'), 'utf8')).toContain(
      pv.metadata?.name,
    );
  });

  it('deletes the directory with archiveOnDelete false', async () => {
    const { pv } = await bindData(main, { archiveOnDelete: 'false' });
    const dir = await reachVolumeOverNfs(main.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect((await provisioners.entries(main)).filter((name) => name.includes(dir))).toEqual([]);
  });

  it('refuses nfs-subdir parameters such as pathPattern with a ProvisioningFailed event', async () => {
    const namespace = await env.namespace('client');
    const storageClassName = await provisioners.storageClass(main, { pathPattern: 'x' });
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const event = await waitForEvent(namespace, 'ProvisioningFailed');
    expect(event).toMatch(/unknown parameter "pathPattern"/u);
  });

  it('works with NFS_PATH=/', async () => {
    const root = await provisioners.deploy('/', '/');
    const { namespace, pv } = await bindData(root, { archiveOnDelete: 'false' });
    expect(pv.spec?.nfs?.path).toBe(`/${namespace}-data-${pv.metadata?.name}`);
    await reachVolumeOverNfs(root.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect(await provisioners.entries(root)).toEqual([]);
  });
});

async function waitForEvent(namespace: string, reason: string): Promise<string> {
  return waitFor(
    async () => {
      const events = await core.listNamespacedEvent({ namespace });
      return events.items.find((event) => event.reason === reason)?.message;
    },
    { timeoutMs, description: `a ${reason} event in ${namespace}` },
  );
}
