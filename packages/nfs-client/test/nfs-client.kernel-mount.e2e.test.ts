/**
 * End-to-end on a real kernel NFS client: the bundled `nfs-client-provisioner` runs inside the test
 * guest (User-Mode Linux) on a `mount -t nfs4` of a nfs-ganesha export, as its pod runs under
 * kubelet, against the real control plane under the example RBAC. Volumes are reached through a
 * kernel mount of the PV's `server:path`. The NFS behaviours a local directory hides (root_squash,
 * silly renames, server restarts, full exports) are the shared provisioner's, tested in nfs-subdir.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bindClaim, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import { nfsExampleDeployment } from '@kube-provisioner/testenv/internal';
import {
  type GuestNfsDeployment,
  useGuestNfsProvisioners,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const provisioners = useGuestNfsProvisioners(env, {
  ...nfsExampleDeployment,
  entry: join(import.meta.dirname, '..', 'src', 'cli.ts'),
  prefix: 'client-kernel',
});
const timeoutMs = 90_000;

async function bindData(
  deployment: GuestNfsDeployment,
  parameters: Record<string, string> = {},
): Promise<{ namespace: string; pv: V1PersistentVolume }> {
  const namespace = await env.namespace('client-kernel');
  const storageClassName = await provisioners.storageClass(deployment, parameters);
  return {
    namespace,
    pv: await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName, timeoutMs }),
  };
}

describe.skipIf(!provisioners.available())('nfs-client-provisioner on a kernel NFS mount', () => {
  let main: GuestNfsDeployment;

  beforeAll(async () => {
    main = await provisioners.deploy();
  });

  it('provisions <namespace>-<claim>-<pv> directories that a kernel mount of the PV writes into', async () => {
    const { namespace, pv } = await bindData(main);
    expect(pv.spec?.nfs?.server).toBe(main.endpoint.address);
    expect(pv.spec?.nfs?.path).toBe(`/export/${namespace}-data-${pv.metadata?.name}`);
    expect(await provisioners.reachVolume(main, pv)).toBe(`${namespace}-data-${pv.metadata?.name}`);
  });

  it('archives to archived-<dir> by default through the mount, keeping the data', async () => {
    const { pv } = await bindData(main);
    const dir = await provisioners.reachVolume(main, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect(await provisioners.entries(main)).toContain(`archived-${dir}`);
    expect(await provisioners.entries(main)).not.toContain(dir);
    expect(await readFile(join(main.exportDir, `archived-${dir}`, 'probe.txt'), 'utf8')).toBe(
      `probe for ${pv.metadata?.name}\n`,
    );
  });

  it('deletes the directory through the mount with archiveOnDelete false', async () => {
    const { pv } = await bindData(main, { archiveOnDelete: 'false' });
    const dir = await provisioners.reachVolume(main, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect((await provisioners.entries(main)).filter((name) => name.includes(dir))).toEqual([]);
  });

  it('names root_squash in the event when the export squashes root', async () => {
    const squashed = await provisioners.deploy({ server: { squash: 'root' } });
    const namespace = await env.namespace('client-kernel');
    const storageClassName = await provisioners.storageClass(squashed);
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const message = await waitFor(
      async () =>
        (await core.listNamespacedEvent({ namespace })).items.find(
          // A claim seen before the provisioner's cache has its new class fails once for that first.
          (event) => event.reason === 'ProvisioningFailed' && event.message?.includes('root_squash') === true,
        )?.message,
      { timeoutMs, description: `a ProvisioningFailed event naming root_squash in ${namespace}` },
    );
    expect(message).toMatch(/squashes root \(root_squash\).*export it with no_root_squash/u);
    expect(await provisioners.entries(squashed)).toEqual([]);
  });
});
