/**
 * End-to-end: a real per-node `kube-hostpath-provisioner` (shipped RBAC) takes its roots from a node
 * roots file written as kubelet writes a ConfigMap volume, and applies each new version without a
 * restart: the scheduler sees the new capacity, a new claim lands on the root just added, a root
 * taken out still deletes its volume, and an invalid version is refused with the old roots kept.
 */

import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  applyManifests,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capacityObjectName } from '../src/capacity-publisher.ts';
import { type ConfigMapVolume, configMapVolume } from './configmap-volume.ts';

const run = promisify(execFile);
const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';
const timeoutMs = 45_000;
const mi = 1024 ** 2;

const mounts: string[] = [];
const programs: RunningProgram[] = [];
const volumes: ConfigMapVolume[] = [];

/** A tmpfs of `size`: a file system of its own, as each root must be. */
async function tmpfsRoot(size: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'hostpath-roots-reload-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root]);
  mounts.push(root);
  return root;
}

/** A slash-free provisioner name with its CSIDriver (so capacity is published), and a WaitForFirstConsumer class. */
async function capacityAwareClass(): Promise<{ provisionerName: string; className: string }> {
  const provisionerName = `${uniqueName('hostpath')}.e2e.kube-provisioner.io`;
  await storage.createCSIDriver({
    body: {
      metadata: { name: provisionerName },
      spec: {
        attachRequired: false,
        podInfoOnMount: false,
        storageCapacity: true,
        volumeLifecycleModes: ['Persistent'],
      },
    },
  });
  const className = uniqueName('hostpath-roots-reload');
  await storage.createStorageClass({
    body: {
      metadata: { name: className },
      provisioner: provisionerName,
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  });
  return { provisionerName, className };
}

async function claimWithPod(namespace: string, name: string, className: string, size: string): Promise<void> {
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name },
      spec: {
        storageClassName: className,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: size } },
      },
    },
  });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }],
      },
    },
  });
}

function boundVolume(namespace: string, name: string): Promise<V1PersistentVolume> {
  return waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
      if (claim.status?.phase !== 'Bound') throw new Error(`claim is ${claim.status?.phase}`);
      return core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    },
    { timeoutMs, description: `claim ${name} binds` },
  );
}

/** Waits until the node's published capacity for the class is `mib` MiB, or just under. */
async function publishedMiB(node: string, className: string, mib: number): Promise<void> {
  await waitFor(
    async () => {
      const object = await storage.readNamespacedCSIStorageCapacity({
        namespace: systemNamespace,
        name: capacityObjectName(node, className),
      });
      const published = Number(object.capacity) / mi;
      // Room is published rounded down by up to 1 % of each root's size.
      if (published > mib || published < mib * 0.98) throw new Error(`published ${published} MiB`);
      return true;
    },
    { timeoutMs, description: `${node} publishes ${mib} MiB for ${className}` },
  );
}

const rootsFile = (node: string, paths: readonly string[]) =>
  JSON.stringify({
    nodePathMap: [
      { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [] },
      { node, paths },
    ],
  });

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
});

afterAll(async () => {
  await Promise.all(programs.map((program) => program.stop()));
  for (const volume of volumes) await volume[Symbol.asyncDispose]();
  for (const root of mounts) {
    await run('umount', [root]);
    await rm(root, { recursive: true, force: true });
  }
});

describe('a node roots file changed without a restart', () => {
  it('places a new claim on a root added to the ConfigMap, still deletes from a root taken out, and refuses an invalid version', async () => {
    const { provisionerName, className } = await capacityAwareClass();
    const namespace = await env.namespace('roots-reload');
    const node = (await env.createNode()).metadata?.name ?? '';
    const [small, big] = [await tmpfsRoot('64m'), await tmpfsRoot('512m')];
    const config = await configMapVolume('config.json', rootsFile(node, [`small=${small}`]));
    volumes.push(config);
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
    const instance = await startProgram({
      command: cli.command,
      args: [
        ...cli.args,
        '--mode=per-node',
        `--node-name=${node}`,
        `--provisioner-name=${provisionerName}`,
        `--roots-config=${config.file}`,
        '--roots-config-interval=200ms',
      ],
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: account.kubeconfigPath,
        HEALTH_PORT: '0',
        POD_NAMESPACE: systemNamespace,
      },
    });
    programs.push(instance);
    await publishedMiB(node, className, 64);
    await claimWithPod(namespace, 'first', className, '16Mi');
    const first = await boundVolume(namespace, 'first');
    const firstPath = first.spec?.hostPath?.path ?? '';
    expect(firstPath.startsWith(`${small}/`)).toBe(true);

    // Too big for small alone: it binds only once big is added.
    await config.update(rootsFile(node, [`small=${small}`, `big=${big}`]));
    await publishedMiB(node, className, 576);
    await claimWithPod(namespace, 'second', className, '100Mi');
    expect((await boundVolume(namespace, 'second')).spec?.hostPath?.path?.startsWith(`${big}/`)).toBe(true);

    // small taken out: no longer published, but its volume is still deleted.
    await config.update(rootsFile(node, [`big=${big}`]));
    await publishedMiB(node, className, 512);
    await core.deleteNamespacedPod({ namespace, name: 'first', gracePeriodSeconds: 0 });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'first' });
    await waitFor(
      async () => {
        const gone = await access(firstPath).then(
          () => false,
          () => true,
        );
        if (!gone) throw new Error(`${firstPath} is still there`);
        return true;
      },
      { timeoutMs, description: 'the volume on the retired root is deleted' },
    );

    // An invalid version is refused and the roots stay: big is still published.
    await config.update('{"nodePathMap": [{"node": "oops", "paths": ["relative"]}]}');
    await waitFor(
      async () => {
        if (!/node roots file .* refused, the roots stay as they were/.test(instance.output())) {
          throw new Error('not refused yet');
        }
        return true;
      },
      { timeoutMs, description: 'the invalid version is refused' },
    );
    await publishedMiB(node, className, 512);
    expect(instance.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
