/**
 * Typed lifecycle events against the real control plane: a controller with leader election and the
 * test kit's recording provisioner emits `leading` and `synced`, then `provisioned` for a claim a user
 * creates (with the claim and the PV the binder binds it to), `deleted` once the user deletes the
 * claim and the PV is released, and `stoppedLeading` with reason `stopRequested` when it is stopped.
 */
import { ProvisionController } from '@kube-provisioner/controller';
import { leaseNameFor } from '@kube-provisioner/controller/leader-election';
import type { ProvisionControllerEvents } from '@kube-provisioner/controller/lifecycle';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { RecordingProvisioner } from '@kube-provisioner/controller/testing';
import { uniqueName } from '@kube-provisioner/testenv/testing';
import { ApiException, CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { useE2eCluster } from './support/e2e-cluster.ts';
import { type RecordedEvent, recordLifecycle } from './support/lifecycle-recorder.ts';

const { env, client } = useE2eCluster();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const provisionerName = `${uniqueName('events')}.kube-provisioner.io/recording`;
const className = uniqueName('events');
let namespace = '';

/** The first recorded event named `name`, once there is one. */
function find<K extends keyof ProvisionControllerEvents>(
  seen: readonly RecordedEvent[],
  name: K,
): ProvisionControllerEvents[K] {
  const entry = seen.find((recorded) => recorded.name === name);
  if (entry === undefined)
    throw new Error(`no ${name} event yet; seen: ${seen.map((r) => r.name).join(', ')}`);
  return entry.event as ProvisionControllerEvents[K];
}

/** Retries `check` until it stops throwing; generous, as other suites share the two cores. */
function until<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, { timeout: 90_000, interval: 100 });
}

beforeAll(async () => {
  namespace = await env.namespace('lifecycle-events');
  await storage.createStorageClass({
    body: {
      metadata: { name: className },
      provisioner: provisionerName,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    },
  });
});

afterAll(async () => {
  await storage.deleteStorageClass({ name: className }).catch(() => undefined);
});

it('emits leading, synced, provisioned, deleted and stoppedLeading for a claim a user creates and deletes', async () => {
  const provisioner = new RecordingProvisioner();
  const controller = new ProvisionController({
    api: client(),
    provisionerName,
    provisioner,
    leaderElection: { namespace },
    logger: silentLogger,
  });
  const seen = recordLifecycle(controller);
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  try {
    await until(() => find(seen, 'synced'));
    expect(seen.map((recorded) => recorded.name)).toEqual(['leading', 'synced']);
    expect(find(seen, 'leading')).toEqual({
      lease: `${namespace}/${leaseNameFor(provisionerName)}`,
      identity: controller.identity,
    });

    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName: className,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const provisioned = await until(() => find(seen, 'provisioned'));
    expect(provisioned.claim.metadata?.uid).toBe(claim.metadata?.uid);
    expect(provisioned.durationMs).toBeGreaterThanOrEqual(0);
    const pvName = provisioned.volume.metadata?.name ?? '';
    expect(pvName).toBe(provisioner.provisionCalls[0]?.pvName);
    // The PV the event names is the one the API server holds and the binder bound the claim to.
    const bound = await until(async () => {
      const current = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      expect(current.status?.phase).toBe('Bound');
      return current;
    });
    expect(bound.spec?.volumeName).toBe(pvName);
    const volume = await core.readPersistentVolume({ name: pvName });
    expect(volume.spec?.claimRef?.uid).toBe(claim.metadata?.uid);

    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    const deleted = await until(() => find(seen, 'deleted'));
    expect(deleted.volume.metadata?.name).toBe(pvName);
    expect(provisioner.deleteCalls.map((pv) => pv.metadata?.name)).toEqual([pvName]);
    // The PV goes once the pv-protection controller has removed its finalizer.
    await until(async () => {
      const status = await core.readPersistentVolume({ name: pvName }).then(
        () => 200,
        (err: unknown) => (err instanceof ApiException ? err.code : err),
      );
      expect(status).toBe(404);
    });
  } finally {
    stop.abort();
    await running;
  }

  expect(seen.map((recorded) => recorded.name)).toEqual([
    'leading',
    'synced',
    'provisioned',
    'deleted',
    'stoppedLeading',
  ]);
  const stopped = find(seen, 'stoppedLeading');
  expect(stopped).toMatchObject({
    lease: `${namespace}/${leaseNameFor(provisionerName)}`,
    identity: controller.identity,
    reason: 'stopRequested',
    error: undefined,
  });
  expect(stopped.ledMs).toBeGreaterThan(0);
});
