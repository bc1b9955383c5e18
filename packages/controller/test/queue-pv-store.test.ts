import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { QueuePvStore } from '../src/internal/queue-pv-store.ts';
import type { WorkFence } from '../src/internal/work-fence.ts';
import { LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { pump } from '../src/testing/wait.ts';
import { silentLogger } from '../src/util/logger.ts';
import { defaultControllerRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { newClaim, provisionerName } from './controller-fixtures.ts';

const claim = newClaim('claim-1', 'uid-1', 'class-1', provisionerName);
const volume: V1PersistentVolume = {
  metadata: { name: 'pvc-uid-1' },
  spec: { claimRef: { uid: 'uid-1' }, hostPath: { path: '/tmp/pvc-uid-1' } },
};

describe('QueuePvStore', () => {
  it('keeps a PV whose retry finds the term over, and saves it once this replica leads again', async () => {
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
    const events: string[] = [];
    const stop = new AbortController();
    onTestFinished(() => stop.abort());
    const volumes = api.resource(resources.persistentVolumes);
    const store = new QueuePvStore({
      pvs: volumes,
      recordEvent: (_object, type, reason) => events.push(`${type} ${reason}`),
      clock,
      apiRequestTimeoutMs: 30_000,
      verifyExistingPV: true,
      signal: stop.signal,
      fence,
      limiter: defaultControllerRateLimiter(clock),
      workers: 1,
      claimsByUid: () => [claim],
      logger: silentLogger,
    });
    const running = store.run(stop.signal);

    // The inline create fails: the claim counts as provisioned and its PV waits for a retry.
    await store.savePersistentVolume(claim, volume, silentLogger);
    leading = false;
    failCreates = false;
    await pump(clock, 5_000);
    // Not leading: no retry may write, and none reports a failure.
    expect(api.actions().filter((action) => action.verb === 'create')).toHaveLength(1);
    expect((await volumes.list()).items).toEqual([]);
    expect(events).toEqual([]);

    leading = true;
    await pump(clock, 60_000, 1_000);
    expect((await volumes.list()).items.map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1']);
    expect(events).toEqual(['Normal ProvisioningSucceeded']);

    stop.abort();
    await running;
  });
});
