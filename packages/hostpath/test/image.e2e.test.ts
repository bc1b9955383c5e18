/**
 * The built hostpath provisioner image, run as a container the way its DaemonSet runs it (per-node
 * mode, the root mounted at the same path inside and out) against the real control plane under the
 * shipped RBAC, through a ServiceAccount kubeconfig mounted into it. The image is built first if
 * podman does not hold it (`npm run image` builds it too).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyManifests, waitFor } from '@kube-provisioner/testenv';
import {
  architectureTag,
  arm64EmulationAvailable,
  checkVersionAndHelp,
  ensureArm64Emulation,
  ensureProjectImage,
  fetchInside,
  freePorts,
  imageArchitectures,
  projectImage,
  type RunningContainer,
  startContainer,
} from '@kube-provisioner/testenv/internal';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type KubernetesObject, loadAllYaml, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const image = projectImage('hostpath');
const systemNamespace = 'kube-provisioner-hostpath';
const provisionerName = `e2e.kube-provisioner.io/${uniqueName('hostpath-image')}`;
const timeoutMs = 90_000;
/** A cold build (base image included) takes minutes; later runs find the image. */
const buildTimeoutMs = 20 * 60_000;

let root = '';
let port = 0;
let node = '';
let container: RunningContainer | undefined;
/** The ServiceAccount kubeconfig of the shipped RBAC, mounted into every container. */
let kubeconfigPath = '';

function started(): RunningContainer {
  if (!container) throw new Error('the container did not start');
  return container;
}

/** Whether this machine runs arm64 images (emulated on x86-64); says why not otherwise. */
const arm64 = arm64EmulationAvailable();

beforeAll(async () => {
  await ensureProjectImage(image, { onProgress: (message) => console.log(message) });
  if (arm64) await ensureArm64Emulation();
  const rbac = await readFile(join(import.meta.dirname, '..', 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  const account = await env.serviceAccountKubeconfig({
    namespace: systemNamespace,
    name: 'hostpath-provisioner',
  });
  kubeconfigPath = account.kubeconfigPath;
  node = (await env.createNode()).metadata?.name ?? '';
  root = await mkdtemp(join(tmpdir(), 'hostpath-image-'));
  [port = 0] = await freePorts(1);
  container = await startProvisioner({ image: image.tag, node, root, port, provisionerName });
}, buildTimeoutMs);

/** The image in per-node mode as its DaemonSet runs it, for `node`, with volumes under `root`. */
function startProvisioner(options: {
  image: string;
  platform?: string;
  node: string;
  root: string;
  port: number;
  provisionerName: string;
}): Promise<RunningContainer> {
  return startContainer({
    image: options.image,
    ...(options.platform === undefined ? {} : { platform: options.platform }),
    args: ['--mode=per-node'],
    env: {
      NODE_NAME: options.node,
      PROVISIONER_NAME: options.provisionerName,
      HOSTPATH_ROOT: options.root,
      POD_NAMESPACE: systemNamespace,
      KUBECONFIG: '/var/run/kubeconfig',
      HEALTH_PORT: String(options.port),
    },
    mounts: [
      // The same path inside and outside, so PV paths are valid on the node (as in the DaemonSet).
      { source: options.root, target: options.root },
      { source: kubeconfigPath, target: '/var/run/kubeconfig', readOnly: true },
    ],
  });
}

afterAll(async () => {
  const code = await container?.stop();
  await rm(root, { recursive: true, force: true });
  const output = container?.program.output() ?? '';
  expect(output).not.toMatch(/forbidden|"statusCode":403/iu);
  expect(code, output).toBe(0);
});

describe('the hostpath provisioner image', () => {
  it('runs its bundled CLI: --help prints the usage and exits 0', async () => {
    const help = await startContainer({ image: image.tag, args: ['--help'] });
    const code = await help.program.exited;
    await help.stop();
    expect(help.program.output()).toMatch(/^Usage: kube-hostpath-provisioner /mu);
    expect(code).toBe(0);
  });

  it('answers /healthz and /readyz from inside the container', async () => {
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

  it('provisions WaitForFirstConsumer claims on its node, where data written in a volume reaches the host, and deletes them', async () => {
    const namespace = await env.namespace('hostpath-image');
    const storageClassName = uniqueName('hostpath-image');
    await storage.createStorageClass({
      body: {
        metadata: { name: storageClassName },
        provisioner: provisionerName,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    });
    const claims = ['first', 'second'];
    for (const name of claims) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name },
          spec: {
            storageClassName,
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
      // Scheduling the consumer picks the node; no kubelet runs it.
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: `pod-${name}` },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': node },
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }],
          },
        },
      });
    }
    const volumes = await waitFor(
      async () => {
        const list = await core.listNamespacedPersistentVolumeClaim({ namespace });
        const bound = list.items.filter((claim) => claim.status?.phase === 'Bound');
        if (bound.length < claims.length) return undefined;
        return Promise.all(
          bound.map((claim) => core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' })),
        );
      },
      { timeoutMs, description: 'both claims to be Bound' },
    );
    const paths = volumes.map((pv) => {
      const path = pv.spec?.hostPath?.path ?? '';
      expect(path.startsWith(`${root}/`)).toBe(true);
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
        { key: 'kubernetes.io/hostname', operator: 'In', values: [node] },
      ]);
      return path;
    });

    const [first = '', second = ''] = paths;
    const content = `written in the container to ${first}\n`;
    await started().exec([
      'node',
      '-e',
      'require("node:fs").writeFileSync(process.argv[1], process.argv[2])',
      join(first, 'data.txt'),
      content,
    ]);
    expect(await readFile(join(first, 'data.txt'), 'utf8')).toBe(content);
    expect(existsSync(join(second, 'data.txt'))).toBe(false);

    await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
    const names = volumes.map((pv) => pv.metadata?.name ?? '');
    await waitFor(
      async () =>
        !(await core.listPersistentVolume()).items.some((pv) => names.includes(pv.metadata?.name ?? '')),
      { timeoutMs, description: 'the volumes to be deleted' },
    );
    expect(await readdir(root)).toEqual([]);
    await storage.deleteStorageClass({ name: storageClassName });
  });
});

describe.each(imageArchitectures)('the hostpath provisioner image for linux/%s', (architecture) => {
  it.skipIf(architecture === 'arm64' && !arm64)(
    'runs its own architecture: --version prints the version and --help the usage, both exiting 0',
    () => checkVersionAndHelp(image, architecture, 'kube-hostpath-provisioner'),
    // Under emulation each Node start takes seconds.
    120_000,
  );
});

describe.skipIf(!arm64)('the hostpath provisioner image for linux/arm64, under emulation', () => {
  it('is ready, provisions a WaitForFirstConsumer claim on its node and deletes it', async () => {
    const armNode = (await env.createNode()).metadata?.name ?? '';
    const armRoot = await mkdtemp(join(tmpdir(), 'hostpath-image-arm64-'));
    const [armPort = 0] = await freePorts(1);
    const armProvisioner = `e2e.kube-provisioner.io/${uniqueName('hostpath-arm64')}`;
    let emulated: RunningContainer | undefined;
    try {
      emulated = await startProvisioner({
        image: architectureTag(image, 'arm64'),
        platform: 'linux/arm64',
        node: armNode,
        root: armRoot,
        port: armPort,
        provisionerName: armProvisioner,
      });
      const running = emulated;
      await waitFor(
        async () =>
          (await fetchInside(running, `http://127.0.0.1:${armPort}/readyz`).catch(() => undefined))
            ?.status === 200,
        { timeoutMs: 120_000, description: 'the arm64 container to be ready' },
      );
      expect((await running.exec(['node', '-p', 'process.arch'])).trim()).toBe('arm64');

      const namespace = await env.namespace('hostpath-image-arm64');
      const storageClassName = uniqueName('hostpath-arm64');
      await storage.createStorageClass({
        body: {
          metadata: { name: storageClassName },
          provisioner: armProvisioner,
          volumeBindingMode: 'WaitForFirstConsumer',
          reclaimPolicy: 'Delete',
        },
      });
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name: 'arm64' },
          spec: {
            storageClassName,
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: 'pod-arm64' },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': armNode },
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'arm64' } }],
          },
        },
      });
      const pv = await waitFor(
        async () => {
          const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'arm64' });
          return claim.status?.phase === 'Bound'
            ? core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' })
            : undefined;
        },
        { timeoutMs: 120_000, description: 'the claim to be Bound by the arm64 provisioner' },
      );
      const path = pv.spec?.hostPath?.path ?? '';
      expect(path.startsWith(`${armRoot}/`)).toBe(true);
      expect(existsSync(path)).toBe(true);

      await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
      await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'arm64' });
      await waitFor(
        async () =>
          !(await core.listPersistentVolume()).items.some((v) => v.metadata?.name === pv.metadata?.name),
        { timeoutMs: 120_000, description: 'the volume to be deleted' },
      );
      expect(await readdir(armRoot)).toEqual([]);
      await storage.deleteStorageClass({ name: storageClassName });
      const code = await running.stop();
      const output = running.program.output();
      expect(output).not.toMatch(/forbidden|"statusCode":403/iu);
      expect(code, output).toBe(0);
    } finally {
      await emulated?.stop();
      await rm(armRoot, { recursive: true, force: true });
    }
  }, 300_000);
});
