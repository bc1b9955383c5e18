/**
 * End-to-end: one real `kube-hostpath-provisioner` (per-node mode, shipped RBAC) with two named
 * roots, each a tmpfs of its own size. It publishes the room of each class's roots, the real
 * kube-scheduler reads it, and a claim goes to the roomier root, or stays Pending when its class's
 * roots are too small.
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
import { CoreV1Api, type KubernetesObject, loadAllYaml, StorageV1Api } from '@kubernetes/client-node';
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
let program: RunningProgram | undefined;

async function tmpfsRoot(size: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'hostpath-roots-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root]);
  roots.push(root);
  return root;
}

async function claimWithPod(namespace: string, name: string, storageClassName: string, size: string) {
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name },
      spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
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

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
});

afterAll(async () => {
  await program?.stop();
  for (const root of roots) {
    await run('umount', [root]);
    await rm(root, { recursive: true, force: true });
  }
});

describe('several roots on one node', () => {
  it('publishes each class the room of its roots, and the scheduler and the placement follow it', async () => {
    const provisionerName = `${uniqueName('hostpath')}.e2e.kube-provisioner.io`;
    const [anyRoot, smallOnly] = [uniqueName('hostpath-any'), uniqueName('hostpath-small')];
    const namespace = await env.namespace('roots');
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
    for (const [name, parameters] of [
      [anyRoot, undefined],
      [smallOnly, { roots: 'small' }],
    ] as const) {
      await storage.createStorageClass({
        body: {
          metadata: { name },
          provisioner: provisionerName,
          volumeBindingMode: 'WaitForFirstConsumer',
          reclaimPolicy: 'Delete',
          ...(parameters === undefined ? {} : { parameters }),
        },
      });
    }
    const node = (await env.createNode()).metadata?.name ?? '';
    const [small, big] = [await tmpfsRoot('64m'), await tmpfsRoot('512m')];
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
    program = await startProgram({
      command: cli.command,
      args: [...cli.args, '--mode=per-node', `--node-name=${node}`, `--provisioner-name=${provisionerName}`],
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: account.kubeconfigPath,
        HEALTH_PORT: '0',
        POD_NAMESPACE: systemNamespace,
        HOSTPATH_ROOT: `small=${small},big=${big}`,
      },
    });

    const published = await waitFor(
      () =>
        Promise.all(
          [anyRoot, smallOnly].map((className) =>
            storage.readNamespacedCSIStorageCapacity({
              namespace: systemNamespace,
              name: capacityObjectName(node, className),
            }),
          ),
        ),
      { timeoutMs, description: 'both classes are published' },
    );
    const mib = (quantity: unknown) => Math.round(Number(quantity) / mi);
    expect(published.map((object) => [mib(object.capacity), mib(object.maximumVolumeSize)])).toEqual([
      [576, 512],
      [64, 64],
    ]);

    // Both roots have room for it: the roomier one takes it.
    await claimWithPod(namespace, 'to-big', anyRoot, '32Mi');
    const bound = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'to-big' });
        if (claim.status?.phase !== 'Bound') throw new Error(`claim is ${claim.status?.phase}`);
        return core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
      },
      { timeoutMs, description: 'the 32Mi claim binds' },
    );
    expect(bound.spec?.hostPath?.path?.startsWith(`${big}/`)).toBe(true);

    await claimWithPod(namespace, 'small-too-small', smallOnly, '100Mi');
    const event = await waitFor(
      async () => {
        const events = await core.listNamespacedEvent({
          namespace,
          fieldSelector:
            'involvedObject.kind=Pod,involvedObject.name=small-too-small,reason=FailedScheduling',
        });
        const message = events.items[0]?.message;
        if (message === undefined) throw new Error('no FailedScheduling event yet');
        return message;
      },
      { timeoutMs, description: 'the scheduler explains the claim of the small root' },
    );
    expect(event).toMatch(/did not have enough free storage/);
    expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
