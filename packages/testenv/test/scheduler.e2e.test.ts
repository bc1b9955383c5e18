import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { uniqueName, useTestEnv } from '../src/testing.ts';
import { waitFor } from '../src/wait-for.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const storageClass = uniqueName('wffc');

afterAll(async () => {
  await storage.deleteStorageClass({ name: storageClass }).catch(() => undefined);
});

describe('the real kube-scheduler with fake Nodes', () => {
  it('selects a node for a WaitForFirstConsumer claim used by a pod', async () => {
    const node = await env.createNode({ labels: { 'topology.example.com/zone': 'a' } });
    const nodeName = node.metadata?.name;
    expect(node.spec?.taints ?? []).toEqual([]);
    const namespace = await env.namespace('wffc');
    await storage.createStorageClass({
      body: {
        metadata: { name: storageClass },
        provisioner: 'example.com/kube-testenv',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          storageClassName: storageClass,
        },
      },
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'consumer' },
        spec: {
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });

    const selected = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
        return claim.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
      },
      { timeoutMs: 30_000, description: 'the scheduler to select a node for the claim' },
    );
    expect(selected).toBe(nodeName);
  });
});
