/**
 * Lease expiry and renew deadlines are measured on the monotonic clock: setting a replica's wall
 * clock forward or backward (NTP, an administrator) neither lets a standby take a healthy leader's
 * Lease nor stalls the leader's renewals. Only the timestamps written to the Lease follow the wall clock.
 */
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { LeaderElector } from '../src/leader-election/leader-elector.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { settle } from '../src/testing/wait.ts';

const start = Date.UTC(2025, 0, 1);

function candidate(api: FakeKubeApi, identity: string, clock: ManualClock) {
  const stop = new AbortController();
  let leading = 0;
  const elector = new LeaderElector({
    lock: { leases: api.resource(resources.leases), namespace: 'kube-system', name: 'lock', identity },
    callbacks: {
      onStartedLeading: () => {
        leading++;
      },
      onStoppedLeading: () => {},
    },
    clock,
    random: () => 0,
  });
  const done = elector.run(stop.signal);
  return { elector, stop, done, leadings: () => leading };
}

/** Advances every clock together in small steps, letting async work run between them. */
async function pumpAll(clocks: readonly ManualClock[], ms: number, step = 100): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += step) {
    for (const clock of clocks) clock.advance(step);
    await settle();
  }
}

describe('leader election across wall-clock steps', () => {
  it('a standby whose wall clock steps forward by the lease duration does not take the Lease', async () => {
    const apiClock = new ManualClock(start);
    const api = new FakeKubeApi({ clock: apiClock });
    const leaderClock = new ManualClock(start);
    const standbyClock = new ManualClock(start);
    const clocks = [apiClock, leaderClock, standbyClock];
    const a = candidate(api, 'a', leaderClock);
    await pumpAll(clocks, 500);
    const b = candidate(api, 'b', standbyClock);
    await pumpAll(clocks, 5_000);

    standbyClock.stepWall(15_000);
    await pumpAll(clocks, 20_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    expect(b.leadings()).toBe(0);
    a.stop.abort();
    b.stop.abort();
    await pumpAll(clocks, 1_000);
  });

  it('a leader whose wall clock steps backward keeps renewing on time, stamping wall time', async () => {
    const clock = new ManualClock(start);
    const api = new FakeKubeApi({ clock });
    const a = candidate(api, 'a', clock);
    await pumpAll([clock], 500);

    clock.stepWall(-3_600_000);
    await pumpAll([clock], 30_000);
    expect(a.elector.isLeader()).toBe(true);
    const renewTime = new Date(String(api.objects(resources.leases, 'kube-system')[0]?.spec?.renewTime));
    // Renewed within the last retry period, as the (stepped) wall clock tells it.
    expect(clock.wallNow() - renewTime.getTime()).toBeLessThanOrEqual(2_000);
    expect(a.leadings()).toBe(1);
    a.stop.abort();
    await pumpAll([clock], 1_000);
    await expect(a.done).resolves.toBe('cancelled');
  });
});
