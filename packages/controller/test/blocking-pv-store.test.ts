import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { BlockingPvStore } from '../src/internal/blocking-pv-store.ts';
import { openFence } from '../src/internal/work-fence.ts';
import type { OperationContext } from '../src/provisioner.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { settle } from '../src/testing/wait.ts';
import { silentLogger } from '../src/util/logger.ts';
import { newClaim, provisionerName, RecordingProvisioner } from './controller-fixtures.ts';

const claim = newClaim('claim-1', 'uid-1', 'class-1', provisionerName);
const volume: V1PersistentVolume = {
  metadata: { name: 'pvc-uid-1' },
  spec: { claimRef: { uid: 'uid-1' }, hostPath: { path: '/tmp/pvc-uid-1' } },
};

/** A blocking store (5 attempts, 10 s apart) whose PV creates always fail. */
function failingStore() {
  const clock = new ManualClock(1_700_000_000_000);
  const api = new FakeKubeApi({ clock });
  api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
    throw new Error('etcd unavailable');
  });
  const stop = new AbortController();
  const provisioner = new RecordingProvisioner();
  const events: string[] = [];
  const store = new BlockingPvStore(
    {
      pvs: api.resource(resources.persistentVolumes),
      recordEvent: (_object, type, reason, message) => events.push(`${type} ${reason}: ${message}`),
      clock,
      apiRequestTimeoutMs: 30_000,
      verifyExistingPV: true,
      signal: stop.signal,
      fence: openFence,
    },
    { steps: 5, initial: 10_000, factor: 1 },
    provisioner,
  );
  return { clock, stop, provisioner, events, store };
}

describe('BlockingPvStore', () => {
  it('deletes the asset after the last failed save attempt', async () => {
    const { clock, provisioner, events, store } = failingStore();
    const saving = store.savePersistentVolume(claim, volume, silentLogger);
    const outcome = saving.catch((err: unknown) => err);
    for (let step = 0; step < 5; step++) {
      await settle(10);
      clock.advance(10_000);
    }
    expect(((await outcome) as Error).message).toBe('etcd unavailable');
    expect(provisioner.deleteCalls.map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1']);
    expect(events).toEqual([
      'Warning ProvisioningFailed: Error creating provisioned PV object for claim default/claim-1: etcd unavailable. Deleting the volume.',
    ]);
  });

  it('keeps the asset, without events, when a hard stop interrupts the save', async () => {
    const { clock, stop, provisioner, events, store } = failingStore();
    const outcome = store.savePersistentVolume(claim, volume, silentLogger).catch((err: unknown) => err);
    await settle(10);
    clock.advance(5_000);
    stop.abort();
    expect(((await outcome) as Error).message).toBe('etcd unavailable');
    expect(provisioner.deleteCalls).toEqual([]);
    expect(events).toEqual([]);
  });

  it('reports no cleanup failure when a hard stop interrupts the cleanup', async () => {
    const { clock, stop, provisioner, events, store } = failingStore();
    Object.assign(provisioner, {
      delete: async (pv: V1PersistentVolume, context: OperationContext): Promise<void> => {
        provisioner.deleteCalls.push(pv);
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        throw context.signal.reason;
      },
    });
    const outcome = store.savePersistentVolume(claim, volume, silentLogger).catch((err: unknown) => err);
    for (let step = 0; step < 5; step++) {
      await settle(10);
      clock.advance(10_000);
    }
    await settle(10);
    expect(provisioner.deleteCalls).toHaveLength(1);
    stop.abort();
    expect(((await outcome) as Error).message).toBe('etcd unavailable');
    expect(events.filter((event) => event.includes('ProvisioningCleanupFailed'))).toEqual([]);
  });
});
