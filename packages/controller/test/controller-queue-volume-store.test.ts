import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { QueueVolumeStore } from '../src/controller/queue-volume-store.ts';
import type { WorkFence } from '../src/controller/work-fence.ts';
import { LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { defaultControllerRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { newClaim, provisionerName } from './controller-fixtures.ts';

const claim = newClaim('claim-1', 'uid-1', 'class-1', provisionerName);
const volume: V1PersistentVolume = {
  metadata: { name: 'pvc-uid-1' },
  spec: { claimRef: { uid: 'uid-1' }, hostPath: { path: '/tmp/pvc-uid-1' } },
};

/** Lets pending promise callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('QueueVolumeStore', () => {
  it('drops a queued PV and forgets its failures when the retry finds the term over', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const api = new FakeKubeApi({ clock });
    let failCreates = true;
    api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
      if (failCreates) throw new Error('etcd unavailable');
      return undefined;
    });
    let leading = true;
    const fence: WorkFence = {
      assertLeader: () => {
        if (!leading) throw new LeadershipLapsedError('lease lapsed');
      },
      abandoned: () => !leading,
    };
    const limiter = defaultControllerRateLimiter(clock);
    const stop = new AbortController();
    const volumes = api.resource(resources.persistentVolumes);
    const store = new QueueVolumeStore({
      volumes,
      recordEvent: () => {},
      clock,
      apiRequestTimeoutMs: 30_000,
      verifyExistingPV: true,
      signal: stop.signal,
      fence,
      limiter,
      workers: 1,
      claimsByUid: () => [claim],
      logger: silentLogger,
    });
    const running = store.run(stop.signal);

    // The inline create fails: the PV waits for a background retry.
    await store.storeVolume(claim, volume, silentLogger);
    expect(limiter.numRequeues('pvc-uid-1')).toBe(1);

    leading = false;
    failCreates = false;
    clock.advance(1_000);
    await settle();
    // The successor provisions the claim again and saves its own PV; this replica keeps nothing of it.
    expect((await volumes.list()).items).toEqual([]);
    expect(limiter.numRequeues('pvc-uid-1')).toBe(0);

    leading = true;
    clock.advance(60_000);
    await settle();
    expect((await volumes.list()).items).toEqual([]);

    stop.abort();
    await running;
  });
});
