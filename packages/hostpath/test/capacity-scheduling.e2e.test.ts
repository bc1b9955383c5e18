/**
 * End-to-end: the real kube-scheduler places WaitForFirstConsumer claims by the CSIStorageCapacity
 * objects two real `kube-hostpath-provisioner` processes publish (per-node mode, shipped RBAC), each
 * for a fake Node whose root is a tmpfs of its own size.
 */

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
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
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capacityObjectName } from '../src/capacity-publisher.ts';

const run = promisify(execFile);
const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';
const timeoutMs = 45_000;

const roots: string[] = [];
const programs: RunningProgram[] = [];

/** A tmpfs of `size` (a file system of its own, so statfs tells the instances apart). */
async function tmpfsRoot(size: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'hostpath-capacity-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root]);
  roots.push(root);
  return root;
}

async function startInstance(
  node: string,
  root: string,
  name: string,
  kubeconfig: string,
): Promise<RunningProgram> {
  const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
  const program = await startProgram({
    command: cli.command,
    args: [
      ...cli.args,
      '--mode=per-node',
      `--node-name=${node}`,
      `--provisioner-name=${name}`,
      `--root=${root}`,
    ],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: kubeconfig,
      HEALTH_PORT: '0',
      POD_NAMESPACE: systemNamespace,
    },
  });
  programs.push(program);
  return program;
}

function claimBody(name: string, storageClassName: string, size: string): V1PersistentVolumeClaim {
  return {
    metadata: { name },
    spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  };
}

async function claimWithPod(namespace: string, name: string, className: string, size: string): Promise<void> {
  await core.createNamespacedPersistentVolumeClaim({ namespace, body: claimBody(name, className, size) });
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

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
});

afterAll(async () => {
  await Promise.all(programs.map((program) => program.stop()));
  for (const root of roots) {
    await run('umount', [root]);
    await rm(root, { recursive: true, force: true });
  }
});

describe('capacity-aware scheduling', () => {
  it('sends a claim too big for node A to node B, and keeps one too big for both Pending with the reason', async () => {
    // Slash-free, so a CSIDriver can carry it and the instances publish (PUBLISH_CAPACITY=auto).
    const provisionerName = `${uniqueName('hostpath')}.e2e.kube-provisioner.io`;
    const className = uniqueName('hostpath-capacity');
    const namespace = await env.namespace('capacity');
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
    await storage.createStorageClass({
      body: {
        metadata: { name: className },
        provisioner: provisionerName,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    });
    const [nodeA, nodeB] = [await env.createNode(), await env.createNode()].map(
      (node) => node.metadata?.name ?? '',
    );
    const [rootA, rootB] = [await tmpfsRoot('64m'), await tmpfsRoot('4g')];
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const [instanceA, instanceB] = [
      await startInstance(nodeA ?? '', rootA ?? '', provisionerName, account.kubeconfigPath),
      await startInstance(nodeB ?? '', rootB ?? '', provisionerName, account.kubeconfigPath),
    ];
    const names = [nodeA, nodeB].map((node) => capacityObjectName(node ?? '', className));
    const published = await waitFor(
      async () => {
        const objects = await Promise.all(
          names.map((name) => storage.readNamespacedCSIStorageCapacity({ namespace: systemNamespace, name })),
        );
        return objects;
      },
      { timeoutMs, description: 'both nodes publish their capacity' },
    );
    expect(published.map((object) => object.nodeTopology?.matchLabels)).toEqual([
      { 'kubernetes.io/hostname': nodeA },
      { 'kubernetes.io/hostname': nodeB },
    ]);

    await claimWithPod(namespace, 'fits-b', className, '1Gi');
    const bound = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'fits-b' });
        if (claim.status?.phase !== 'Bound') throw new Error(`claim is ${claim.status?.phase}`);
        return core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
      },
      { timeoutMs, description: 'the 1Gi claim binds' },
    );
    expect(bound.spec?.hostPath?.path?.startsWith(`${rootB}/`)).toBe(true);
    expect(bound.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([
      nodeB,
    ]);

    await claimWithPod(namespace, 'fits-none', className, '10Gi');
    const event = await waitFor(
      async () => {
        const events = await core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.kind=Pod,involvedObject.name=fits-none,reason=FailedScheduling',
        });
        const message = events.items[0]?.message;
        if (message === undefined) throw new Error('no FailedScheduling event yet');
        return message;
      },
      { timeoutMs, description: 'the scheduler explains the 10Gi claim' },
    );
    expect(event).toMatch(/did not have enough free storage/);
    const pending = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'fits-none' });
    expect(pending.status?.phase).toBe('Pending');
    expect(pending.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();

    // A clean stop withdraws the node's objects.
    await instanceA.stop();
    const gone = await storage
      .readNamespacedCSIStorageCapacity({ namespace: systemNamespace, name: names[0] ?? '' })
      .then(
        () => false,
        (err: unknown) => (err as { code?: number }).code === 404,
      );
    expect(gone).toBe(true);
    expect(
      await storage.readNamespacedCSIStorageCapacity({ namespace: systemNamespace, name: names[1] ?? '' }),
    ).toBeDefined();
    expect(instanceB.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
