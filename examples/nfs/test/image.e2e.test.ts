/**
 * The built NFS provisioner image, run as a container against the real control plane under the
 * example's RBAC (a ServiceAccount kubeconfig mounted into it). The export is a host directory
 * bind-mounted at /persistentvolumes, which is what kubelet's NFS mount looks like from inside the
 * pod. The image is built first if podman does not hold it (`npm run image` builds it too).
 */
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { bindClaim, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import {
  architectureTag,
  arm64EmulationAvailable,
  checkVersionAndHelp,
  ensureArm64Emulation,
  ensureProjectImage,
  fetchInside,
  freePorts,
  type ImageArchitecture,
  type InsideResponse,
  imageArchitectures,
  projectImage,
  type RunningContainer,
  startContainer,
} from '@kube-provisioner/testenv/internal';
import {
  type DeploymentAccount,
  deploymentAccount,
  uniqueName,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const image = projectImage('nfs-subdir-provisioner');
const nfsServer = 'nfs.example.test';
const nfsPath = '/srv/nfs/kubernetes';
const mountRoot = '/persistentvolumes';
/** A cold build (base image included) takes minutes; later runs find the image. */
const buildTimeoutMs = 20 * 60_000;

/** A provisioner container on its own export directory, with a StorageClass of its own. */
interface Deployment {
  readonly container: RunningContainer;
  readonly exportDir: string;
  /** Holds a copy of the ServiceAccount kubeconfig that any container user may read. */
  readonly configDir: string;
  readonly storageClassName: string;
  /** GETs a probe path from inside the container. */
  probe(path: '/healthz' | '/readyz'): Promise<InsideResponse>;
}

const deployments: Deployment[] = [];
let account: DeploymentAccount;

/**
 * Starts the image on a fresh export directory (mode 0755, owned by root), as `user` if given, and
 * for `architecture` if given (arm64 runs under emulation).
 */
async function deploy(user?: string, architecture?: ImageArchitecture): Promise<Deployment> {
  const exportDir = await mkdtemp(join(tmpdir(), 'nfs-image-export-'));
  await chmod(exportDir, 0o755);
  const configDir = await mkdtemp(join(tmpdir(), 'nfs-image-config-'));
  await chmod(configDir, 0o755);
  const kubeconfig = join(configDir, 'kubeconfig');
  await copyFile(account.kubeconfigPath, kubeconfig);
  await chmod(kubeconfig, 0o644);
  const [port = 0] = await freePorts(1);
  const provisionerName = `e2e.kube-provisioner.io/${uniqueName('nfs-image')}`;
  const container = await startContainer({
    image: architecture === undefined ? image.tag : architectureTag(image, architecture),
    ...(architecture === undefined ? {} : { platform: `linux/${architecture}` }),
    ...(user === undefined ? {} : { user }),
    env: {
      NFS_SERVER: nfsServer,
      NFS_PATH: nfsPath,
      PROVISIONER_NAME: provisionerName,
      POD_NAMESPACE: account.namespace,
      KUBECONFIG: '/var/run/kubeconfig',
      METRICS_PORT: String(port),
    },
    mounts: [
      { source: exportDir, target: mountRoot },
      { source: kubeconfig, target: '/var/run/kubeconfig', readOnly: true },
    ],
  });
  const storageClassName = uniqueName('nfs-image');
  const deployment: Deployment = {
    container,
    exportDir,
    configDir,
    storageClassName,
    probe: (path) => fetchInside(container, `http://127.0.0.1:${port}${path}`),
  };
  deployments.push(deployment);
  await storage.createStorageClass({
    body: {
      metadata: { name: storageClassName },
      provisioner: provisionerName,
      parameters: { archiveOnDelete: 'false' },
      reclaimPolicy: 'Delete',
    },
  });
  return deployment;
}

/** Waits until a probe answers at all (the server is listening), then returns that answer. */
function firstAnswer(
  deployment: Deployment,
  path: '/healthz' | '/readyz',
  want?: number,
  timeoutMs = 60_000,
): Promise<InsideResponse> {
  return waitFor(
    async () => {
      const response = await deployment.probe(path).catch(() => undefined);
      return response !== undefined && (want === undefined || response.status === want)
        ? response
        : undefined;
    },
    { timeoutMs, description: `${path} to answer${want === undefined ? '' : ` ${want}`}` },
  );
}

/** Whether this machine runs arm64 images (emulated on x86-64); says why not otherwise. */
const arm64 = arm64EmulationAvailable();
/** Slower under emulation: each Node start takes seconds, not tens of milliseconds. */
const emulatedTimeoutMs = 240_000;

beforeAll(async () => {
  await ensureProjectImage(image, { onProgress: (message) => console.log(message) });
  if (arm64) await ensureArm64Emulation();
  account = await deploymentAccount(env, join(import.meta.dirname, '..', 'deploy'));
}, buildTimeoutMs);

// Every container is stopped and removed, whatever the tests did.
afterAll(async () => {
  const problems: string[] = [];
  for (const { container, exportDir, configDir, storageClassName } of deployments) {
    const code = await container.stop();
    await rm(exportDir, { recursive: true, force: true });
    await rm(configDir, { recursive: true, force: true });
    await storage.deleteStorageClass({ name: storageClassName }).catch(() => undefined);
    const output = container.program.output();
    if (code !== 0) problems.push(`${container.name} exited with ${code}:\n${output}`);
    if (/forbidden|"statusCode":403/iu.test(output))
      problems.push(`${container.name} was denied:\n${output}`);
  }
  expect(problems).toEqual([]);
});

describe('the NFS provisioner image, as root (its default)', () => {
  it('runs its bundled CLI: --help prints the usage and exits 0', async () => {
    const help = await startContainer({ image: image.tag, args: ['--help'] });
    const code = await help.program.exited;
    await help.stop();
    expect(help.program.output()).toMatch(/^Usage: nfs-subdir-provisioner /mu);
    expect(code).toBe(0);
  });

  it('answers /healthz and /readyz from inside the container, provisions claims into the mounted export where data written in a volume reaches the host, and deletes them', async () => {
    const deployment = await deploy();
    expect((await firstAnswer(deployment, '/readyz', 200)).body).toContain('[+]mount-root ok');
    expect((await deployment.probe('/healthz')).status).toBe(200);

    const namespace = await env.namespace('nfs-image');
    const { storageClassName, exportDir } = deployment;
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
    await deployment.container.exec([
      'node',
      '-e',
      'require("node:fs").writeFileSync(process.argv[1], process.argv[2])',
      posix.join(mountRoot, first, 'data.txt'),
      content,
    ]);
    expect(await readFile(join(exportDir, first, 'data.txt'), 'utf8')).toBe(content);
    expect(existsSync(join(exportDir, second, 'data.txt'))).toBe(false);

    for (const pv of volumes) await deleteClaimAndVolume(env.kubeConfig, pv);
    for (const directory of directories) expect(existsSync(join(exportDir, directory))).toBe(false);
  });
});

describe('the NFS provisioner image as uid 1000 on a root-owned 0755 export', () => {
  it('is not ready, naming the mount root and the errno, and fails a claim with one event that says how to fix it', async () => {
    const deployment = await deploy('1000:1000');
    const notReady = await firstAnswer(deployment, '/readyz');
    expect(notReady.status).toBe(500);
    expect(notReady.body).toContain(
      `[-]mount-root failed: ${mountRoot} is not writable by uid 1000, gid 1000`,
    );
    expect(notReady.body).toContain('(EACCES)');
    expect((await deployment.probe('/healthz')).status).toBe(200);

    const namespace = await env.namespace('nfs-image-denied');
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'denied' },
        spec: {
          storageClassName: deployment.storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const events = await waitFor(
      async () => {
        const list = await core.listNamespacedEvent({ namespace });
        const failed = list.items.filter(
          (event) => event.reason === 'ProvisioningFailed' && event.involvedObject.name === 'denied',
        );
        return failed.length > 0 ? failed : undefined;
      },
      { timeoutMs: 90_000, description: 'a ProvisioningFailed event for the claim' },
    );
    expect(events).toHaveLength(1);
    const message = events[0]?.message ?? '';
    expect(message).toMatch(/permission denied \(EACCES\) in \/persistentvolumes as uid 1000, gid 1000/u);
    expect(message).toContain('run the provisioner as root');
    expect(message).toContain('securityContext.fsGroup');
    expect(await readdir(deployment.exportDir)).toEqual([]);
  });
});

describe.each(imageArchitectures)('the NFS provisioner image for linux/%s', (architecture) => {
  it.skipIf(architecture === 'arm64' && !arm64)(
    'runs its own architecture: --version prints the version and --help the usage, both exiting 0',
    () => checkVersionAndHelp(image, architecture, 'nfs-subdir-provisioner'),
    emulatedTimeoutMs,
  );
});

describe.skipIf(!arm64)('the NFS provisioner image for linux/arm64, under emulation', () => {
  it(
    'is ready, provisions a claim into the mounted export and deletes it',
    async () => {
      const deployment = await deploy(undefined, 'arm64');
      expect((await firstAnswer(deployment, '/readyz', 200, emulatedTimeoutMs / 2)).body).toContain(
        '[+]mount-root ok',
      );
      const arch = await deployment.container.exec(['node', '-p', 'process.arch']);
      expect(arch.trim()).toBe('arm64');
      const namespace = await env.namespace('nfs-image-arm64');
      const pv = await bindClaim(env.kubeConfig, {
        namespace,
        name: 'arm64',
        storageClassName: deployment.storageClassName,
        timeoutMs: emulatedTimeoutMs / 4,
      });
      const directory = posix.relative(nfsPath, pv.spec?.nfs?.path ?? '');
      expect(existsSync(join(deployment.exportDir, directory))).toBe(true);
      await deleteClaimAndVolume(env.kubeConfig, pv, emulatedTimeoutMs / 4);
      expect(existsSync(join(deployment.exportDir, directory))).toBe(false);
    },
    emulatedTimeoutMs,
  );
});
