/**
 * End-to-end: the `nfs-client-provisioner` bin, run as a container would run it (under the example
 * RBAC through a ServiceAccount kubeconfig, `--mount-root` on the exported directory), against the
 * real control plane and a real NFS server (nfs-ganesha), checking every PV over NFS.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  applyManifests,
  bindClaim,
  deleteClaimAndVolume,
  type NfsProvisionerUnderTest,
  reachVolumeOverNfs,
  renderKustomization,
  startNfsProvisioner,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { nfsToolsAvailable, uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const exampleDeployDir = join(packageDir, '..', '..', 'examples', 'nfs', 'deploy');
const provisionerNamespace = 'nfs-provisioner';
const rbacKinds = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
const timeoutMs = 90_000;

const deployments: NfsProvisionerUnderTest[] = [];
let kubeconfigPath: string;

async function deploy(exportPath: string, nfsPath = exportPath): Promise<NfsProvisionerUnderTest> {
  const deployment = await startNfsProvisioner({
    command: workspaceBinCommand(packageDir, 'nfs-client-provisioner'),
    provisionerName: `e2e.kube-provisioner.io/${uniqueName('nfs-client')}`,
    kubeconfigPath,
    namespace: provisionerNamespace,
    exportPath,
    nfsPath,
  });
  deployments.push(deployment);
  return deployment;
}

async function storageClass(
  deployment: NfsProvisionerUnderTest,
  parameters: Record<string, string> = {},
): Promise<string> {
  const name = uniqueName('nfs-client');
  await storage.createStorageClass({
    body: {
      metadata: { name },
      provisioner: deployment.provisionerName,
      parameters,
      reclaimPolicy: 'Delete',
    },
  });
  return name;
}

async function visibleEntries(deployment: NfsProvisionerUnderTest): Promise<string[]> {
  return (await readdir(deployment.server.exportDir)).filter((name) => !name.startsWith('.')).sort();
}

describe.skipIf(!nfsToolsAvailable())('nfs-client-provisioner against nfs-ganesha', () => {
  let main: NfsProvisionerUnderTest;

  beforeAll(async () => {
    const objects = await renderKustomization(exampleDeployDir);
    await applyManifests(
      env.kubeConfig,
      objects.filter((object) => rbacKinds.includes(object.kind ?? '')),
    );
    const account = objects.find((object) => object.kind === 'ServiceAccount')?.metadata?.name ?? '';
    kubeconfigPath = (await env.serviceAccountKubeconfig({ namespace: provisionerNamespace, name: account }))
      .kubeconfigPath;
    main = await deploy('/export');
  });

  afterAll(async () => {
    for (const deployment of deployments) {
      expect(await deployment.stop()).toBe(0);
      // The Lease watch is an optional speed-up the example Role deliberately does not grant.
      const denied = deployment.program
        .output()
        .split('\n')
        .filter((line) => /forbidden|"statusCode":403/iu.test(line));
      expect(denied.filter((line) => !line.includes('Cannot watch the lease'))).toEqual([]);
    }
  });

  it('binds claims to <namespace>-<claim>-<pv> directories reachable at the PV server:path', async () => {
    const namespace = await env.namespace('client');
    const pv = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'data',
      storageClassName: await storageClass(main),
      timeoutMs,
    });
    expect(await reachVolumeOverNfs(main.server, pv)).toBe(`${namespace}-data-${pv.metadata?.name}`);
    expect(pv.spec?.nfs?.path).toBe(`/export/${namespace}-data-${pv.metadata?.name}`);
  });

  it('archives to archived-<dir> at the export root by default, keeping the data', async () => {
    const namespace = await env.namespace('client');
    const pv = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'data',
      storageClassName: await storageClass(main),
      timeoutMs,
    });
    const dir = await reachVolumeOverNfs(main.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect(await visibleEntries(main)).toContain(`archived-${dir}`);
    expect(existsSync(join(main.server.exportDir, dir))).toBe(false);
    expect(await readFile(join(main.server.exportDir, `archived-${dir}`, 'probe.txt'), 'utf8')).toContain(
      pv.metadata?.name,
    );
  });

  it('deletes the directory with archiveOnDelete false', async () => {
    const namespace = await env.namespace('client');
    const pv = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'data',
      storageClassName: await storageClass(main, { archiveOnDelete: 'false' }),
      timeoutMs,
    });
    const dir = await reachVolumeOverNfs(main.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect((await visibleEntries(main)).filter((name) => name.includes(dir))).toEqual([]);
  });

  it('refuses nfs-subdir parameters such as pathPattern with a ProvisioningFailed event', async () => {
    const namespace = await env.namespace('client');
    const storageClassName = await storageClass(main, { pathPattern: 'x' });
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
    const root = await deploy('/', '/');
    const namespace = await env.namespace('client');
    const pv = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'data',
      storageClassName: await storageClass(root, { archiveOnDelete: 'false' }),
      timeoutMs,
    });
    expect(pv.spec?.nfs?.path).toBe(`/${namespace}-data-${pv.metadata?.name}`);
    await reachVolumeOverNfs(root.server, pv);
    await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
    expect(await visibleEntries(root)).toEqual([]);
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
