import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { uniqueName, useTestEnv } from '../src/testing.ts';
import { waitFor } from '../src/wait-for.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const volumes: string[] = [];

afterAll(async () => {
  await Promise.all(volumes.map((name) => core.deletePersistentVolume({ name }).catch(() => undefined)));
});

describe('the real PV binder in kube-controller-manager', () => {
  it('binds a pre-bound PV and its claim, and releases the PV once the claim is deleted', async () => {
    const namespace = await env.namespace('binder');
    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          storageClassName: '',
        },
      },
    });
    const volume = uniqueName('pv');
    volumes.push(volume);
    await core.createPersistentVolume({
      body: {
        metadata: { name: volume },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          hostPath: { path: '/tmp/kube-testenv-binder' },
          claimRef: { namespace, name: 'data', uid: claim.metadata?.uid ?? '' },
        },
      },
    });

    const bound = await waitFor(
      async () => {
        const [pv, pvc] = await Promise.all([
          core.readPersistentVolume({ name: volume }),
          core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' }),
        ]);
        return pv.status?.phase === 'Bound' && pvc.status?.phase === 'Bound' && pvc;
      },
      { timeoutMs: 30_000, description: 'PV and PVC to be Bound' },
    );
    expect(bound.spec?.volumeName).toBe(volume);
    expect(bound.metadata?.annotations?.['pv.kubernetes.io/bind-completed']).toBe('yes');
    expect(bound.metadata?.finalizers).toContain('kubernetes.io/pvc-protection');

    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    const released = await waitFor(
      async () => {
        const pv = await core.readPersistentVolume({ name: volume });
        return pv.status?.phase === 'Released' && pv;
      },
      { timeoutMs: 30_000, description: 'PV to be Released' },
    );
    expect(released.spec?.claimRef?.uid).toBe(claim.metadata?.uid);
  });
});
