import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../src/testing.ts';
import { waitFor } from '../src/wait-for.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);

/** The first event (or end) of a watch on a namespace's ConfigMaps from `resourceVersion`. */
async function firstWatchEvent(
  namespace: string,
  resourceVersion: string,
): Promise<{ type: string; code?: number }> {
  let abort: AbortController | undefined;
  const event = new Promise<{ type: string; code?: number }>((resolve, reject) => {
    new Watch(env.kubeConfig)
      .watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { resourceVersion, allowWatchBookmarks: false },
        (type, object: { code?: number }) =>
          resolve(type === 'ERROR' ? { type, code: object.code ?? 0 } : { type }),
        (err: unknown) => (err ? reject(err) : resolve({ type: 'CLOSED' })),
      )
      .then((controller) => {
        abort = controller;
      }, reject);
  });
  try {
    return await event;
  } finally {
    abort?.abort();
  }
}

describe('fault hooks', () => {
  it('restart kube-apiserver keeping etcd data, and expire old resourceVersions by compacting etcd', async () => {
    const controlPlane = await env.controlPlane();
    const namespace = await env.namespace('faults');
    const first = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'first' } } });
    const oldVersion = first.metadata?.resourceVersion ?? '';
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'second' } } });
    const before = (await controlPlane.processes())['kube-apiserver'];

    const revision = await controlPlane.compactEtcd();
    expect(revision).toBeGreaterThan(Number(oldVersion));
    await controlPlane.restartComponent('kube-apiserver');

    // processes() names only a live process running the component's own binary.
    const after = (await controlPlane.processes())['kube-apiserver'];
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);
    const kept = await core.readNamespacedConfigMap({ namespace, name: 'first' });
    expect(kept.metadata?.uid).toBe(first.metadata?.uid);
    expect(await firstWatchEvent(namespace, oldVersion)).toEqual({ type: 'ERROR', code: 410 });
  });

  it('stop and start the scheduler; a pod created meanwhile is scheduled once it is back', async () => {
    const controlPlane = await env.controlPlane();
    await env.createNode();
    const namespace = await env.namespace('scheduler');
    await controlPlane.stopComponent('kube-scheduler');
    expect((await controlPlane.processes())['kube-scheduler']).toBeUndefined();

    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'waiting' },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    await controlPlane.startComponent('kube-scheduler');
    expect((await controlPlane.processes())['kube-scheduler']).toBeGreaterThan(0);
    const scheduledOn = await waitFor(
      async () => (await core.readNamespacedPod({ namespace, name: 'waiting' })).spec?.nodeName,
      { timeoutMs: 30_000, description: 'the pod to be scheduled' },
    );
    // Other test files' fake Nodes may exist too; any existing Node proves the scheduler runs again.
    expect((await core.readNode({ name: scheduledOn })).metadata?.name).toBe(scheduledOn);
  });

  it('stop and start kube-controller-manager, tracking the new process', async () => {
    const controlPlane = await env.controlPlane();
    const before = (await controlPlane.processes())['kube-controller-manager'];
    await controlPlane.stopComponent('kube-controller-manager');
    expect((await controlPlane.processes())['kube-controller-manager']).toBeUndefined();
    await controlPlane.startComponent('kube-controller-manager');
    const after = (await controlPlane.processes())['kube-controller-manager'];
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);
  });
});
