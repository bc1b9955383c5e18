/**
 * The built NFS provisioner image, run as a container against the real control plane under the
 * example's RBAC (a ServiceAccount kubeconfig mounted into it). The export is a host directory
 * bind-mounted at /persistentvolumes, which is what kubelet's NFS mount looks like from inside the
 * pod. The image is built first if podman does not hold it (`npm run image` builds it too).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import {
  bindClaim,
  deleteClaimAndVolume,
  ensureProjectImage,
  fetchInside,
  freePorts,
  projectImage,
  type RunningContainer,
  startContainer,
  waitFor,
} from '@kube-provisioner/testenv';
import {
  type DeploymentAccount,
  deploymentAccount,
  uniqueName,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const image = projectImage('nfs-subdir-provisioner');
const nfsServer = 'nfs.example.test';
const nfsPath = '/srv/nfs/kubernetes';
const provisionerName = `e2e.kube-provisioner.io/${uniqueName('nfs-image')}`;
/** A cold build (base image included) takes minutes; later runs find the image. */
const buildTimeoutMs = 20 * 60_000;

let exportDir = '';
let port = 0;
let account: DeploymentAccount;
let container: RunningContainer | undefined;

function started(): RunningContainer {
  if (!container) throw new Error('the container did not start');
  return container;
}

beforeAll(async () => {
  await ensureProjectImage(image, { onProgress: (message) => console.log(message) });
  account = await deploymentAccount(env, join(import.meta.dirname, '..', 'deploy'));
  exportDir = await mkdtemp(join(tmpdir(), 'nfs-image-export-'));
  [port = 0] = await freePorts(1);
  container = await startContainer({
    image: image.tag,
    env: {
      NFS_SERVER: nfsServer,
      NFS_PATH: nfsPath,
      PROVISIONER_NAME: provisionerName,
      POD_NAMESPACE: account.namespace,
      KUBECONFIG: '/var/run/kubeconfig',
      METRICS_PORT: String(port),
    },
    mounts: [
      { source: exportDir, target: '/persistentvolumes' },
      { source: account.kubeconfigPath, target: '/var/run/kubeconfig', readOnly: true },
    ],
  });
}, buildTimeoutMs);

afterAll(async () => {
  const code = await container?.stop();
  await rm(exportDir, { recursive: true, force: true });
  const output = container?.program.output() ?? '';
  expect(output).not.toMatch(/forbidden|"statusCode":403/iu);
  expect(code, output).toBe(0);
});

describe('the NFS provisioner image', () => {
  it('answers /healthz and /readyz from inside the container once the export is mounted', async () => {
    const ready = await waitFor(
      async () => {
        const response = await fetchInside(started(), `http://127.0.0.1:${port}/readyz`).catch(
          () => undefined,
        );
        return response?.status === 200 ? response : undefined;
      },
      { timeoutMs: 60_000, description: 'the container to be ready' },
    );
    expect(ready.status).toBe(200);
    expect((await fetchInside(started(), `http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('provisions claims into the mounted export, where data written in a volume reaches the host, and deletes them', async () => {
    const namespace = await env.namespace('nfs-image');
    const storageClassName = uniqueName('nfs-image');
    await storage.createStorageClass({
      body: {
        metadata: { name: storageClassName },
        provisioner: provisionerName,
        parameters: { archiveOnDelete: 'false' },
        reclaimPolicy: 'Delete',
      },
    });
    const volumes = await Promise.all(
      ['first', 'second'].map((name) => bindClaim(env.kubeConfig, { namespace, name, storageClassName })),
    );
    const directories = volumes.map((pv) => {
      expect(pv.spec?.nfs?.server).toBe(nfsServer);
      const relative = posix.relative(nfsPath, pv.spec?.nfs?.path ?? '');
      expect(relative === '' || relative.startsWith('..') || relative.includes('/')).toBe(false);
      return relative;
    });
    expect(new Set(directories).size).toBe(2);

    const [first = '', second = ''] = directories;
    const content = `written in the container to ${first}\n`;
    await started().exec([
      'node',
      '-e',
      'require("node:fs").writeFileSync(process.argv[1], process.argv[2])',
      posix.join('/persistentvolumes', first, 'data.txt'),
      content,
    ]);
    expect(await readFile(join(exportDir, first, 'data.txt'), 'utf8')).toBe(content);
    expect(existsSync(join(exportDir, second, 'data.txt'))).toBe(false);

    for (const pv of volumes) await deleteClaimAndVolume(env.kubeConfig, pv);
    for (const directory of directories) expect(existsSync(join(exportDir, directory))).toBe(false);
    await storage.deleteStorageClass({ name: storageClassName });
  });
});
