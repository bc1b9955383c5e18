/**
 * End-to-end: the real kube-scheduler places WaitForFirstConsumer claims by the CSIStorageCapacity
 * objects real `kube-hostpath-provisioner` processes publish (per-node mode, shipped RBAC), for fake
 * Nodes whose roots are tmpfs mounts of their own sizes: one root per node on two nodes, and two
 * named roots on one node.
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
  type V1CSIStorageCapacity,
  type V1PersistentVolume,
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
const mi = 1024 ** 2;

const roots: string[] = [];
const programs: RunningProgram[] = [];

/** A tmpfs of `size` (a file system of its own, so statfs tells the roots apart). */
async function tmpfsRoot(size: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'hostpath-capacity-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root]);
  roots.push(root);
  return root;
}

/**
 * A slash-free provisioner name (so a CSIDriver can carry it and instances publish with
 * `PUBLISH_CAPACITY=auto`), its CSIDriver, and WaitForFirstConsumer classes of it with `parameters`.
 */
async function capacityAwareClasses(
  classes: readonly (Readonly<Record<string, string>> | undefined)[],
): Promise<{ provisionerName: string; classNames: string[] }> {
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
  const classNames: string[] = [];
  for (const parameters of classes) {
    const name = uniqueName('hostpath-capacity');
    await storage.createStorageClass({
      body: {
        metadata: { name },
        provisioner: provisionerName,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
        ...(parameters === undefined ? {} : { parameters: { ...parameters } }),
      },
    });
    classNames.push(name);
  }
  return { provisionerName, classNames };
}

/** One per-node instance for `node`, serving `root` (a `--root` value: a path or named roots). */
async function startInstance(node: string, root: string, provisionerName: string): Promise<RunningProgram> {
  const account = await env.serviceAccountKubeconfig({
    namespace: systemNamespace,
    name: 'hostpath-provisioner',
  });
  const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
  const program = await startProgram({
    command: cli.command,
    args: [
      ...cli.args,
      '--mode=per-node',
      `--node-name=${node}`,
      `--provisioner-name=${provisionerName}`,
      `--root=${root}`,
    ],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: account.kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: systemNamespace,
    },
  });
  programs.push(program);
  return program;
}

/** The CSIStorageCapacity objects of `node` for `classNames`, once all are published. */
function published(node: string, classNames: readonly string[]): Promise<V1CSIStorageCapacity[]> {
  return waitFor(
    () =>
      Promise.all(
        classNames.map((className) =>
          storage.readNamespacedCSIStorageCapacity({
            namespace: systemNamespace,
            name: capacityObjectName(node, className),
          }),
        ),
      ),
    { timeoutMs, description: `${node} publishes its capacity` },
  );
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

/** The PV of claim `name`, once it is Bound. */
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

/** The message of the scheduler's FailedScheduling event on pod `name`. */
function schedulingFailure(namespace: string, name: string): Promise<string> {
  return waitFor(
    async () => {
      const events = await core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name},reason=FailedScheduling`,
      });
      const message = events.items[0]?.message;
      if (message === undefined) throw new Error('no FailedScheduling event yet');
      return message;
    },
    { timeoutMs, description: `the scheduler explains pod ${name}` },
  );
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
    const {
      provisionerName,
      classNames: [className = ''],
    } = await capacityAwareClasses([undefined]);
    const namespace = await env.namespace('capacity');
    const [nodeA = '', nodeB = ''] = [await env.createNode(), await env.createNode()].map(
      (node) => node.metadata?.name ?? '',
    );
    const [rootA, rootB] = [await tmpfsRoot('64m'), await tmpfsRoot('4g')];
    const [instanceA, instanceB] = [
      await startInstance(nodeA, rootA, provisionerName),
      await startInstance(nodeB, rootB, provisionerName),
    ];
    const objects = [...(await published(nodeA, [className])), ...(await published(nodeB, [className]))];
    expect(objects.map((object) => object.nodeTopology?.matchLabels)).toEqual([
      { 'kubernetes.io/hostname': nodeA },
      { 'kubernetes.io/hostname': nodeB },
    ]);

    await claimWithPod(namespace, 'fits-b', className, '1Gi');
    const bound = await boundVolume(namespace, 'fits-b');
    expect(bound.spec?.hostPath?.path?.startsWith(`${rootB}/`)).toBe(true);
    expect(bound.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([
      nodeB,
    ]);

    await claimWithPod(namespace, 'fits-none', className, '10Gi');
    expect(await schedulingFailure(namespace, 'fits-none')).toMatch(/did not have enough free storage/);
    const pending = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'fits-none' });
    expect(pending.status?.phase).toBe('Pending');
    expect(pending.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();

    // A clean stop withdraws the node's objects.
    await instanceA.stop();
    const gone = await storage
      .readNamespacedCSIStorageCapacity({
        namespace: systemNamespace,
        name: capacityObjectName(nodeA, className),
      })
      .then(
        () => false,
        (err: unknown) => (err as { code?: number }).code === 404,
      );
    expect(gone).toBe(true);
    expect(
      await storage.readNamespacedCSIStorageCapacity({
        namespace: systemNamespace,
        name: capacityObjectName(nodeB, className),
      }),
    ).toBeDefined();
    expect(instanceB.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });

  it('publishes each class the room of its named roots on one node, and the scheduler and the placement follow it', async () => {
    const {
      provisionerName,
      classNames: [anyRoot = '', smallOnly = ''],
    } = await capacityAwareClasses([undefined, { roots: 'small' }]);
    const namespace = await env.namespace('roots');
    const node = (await env.createNode()).metadata?.name ?? '';
    const [small, big] = [await tmpfsRoot('64m'), await tmpfsRoot('512m')];
    const instance = await startInstance(node, `small=${small},big=${big}`, provisionerName);

    const mib = (quantity: unknown) => Math.round(Number(quantity) / mi);
    const objects = await published(node, [anyRoot, smallOnly]);
    expect(objects.map((object) => [mib(object.capacity), mib(object.maximumVolumeSize)])).toEqual([
      [576, 512],
      [64, 64],
    ]);

    // Both roots have room for it: the roomier one takes it.
    await claimWithPod(namespace, 'to-big', anyRoot, '32Mi');
    expect((await boundVolume(namespace, 'to-big')).spec?.hostPath?.path?.startsWith(`${big}/`)).toBe(true);

    await claimWithPod(namespace, 'small-too-small', smallOnly, '100Mi');
    expect(await schedulingFailure(namespace, 'small-too-small')).toMatch(/did not have enough free storage/);
    expect(instance.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
