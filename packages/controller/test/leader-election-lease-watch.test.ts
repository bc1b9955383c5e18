// A waiting candidate watches its Lease (in-memory API): it takes a released or deleted Lease at
// once, takes over from a silent holder exactly when the last renewal it saw expires, and falls
// back to polling when it may not watch.
import type { V1Lease } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { LeaderElector } from '../src/leader-election/leader-elector.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { statusError } from '../src/testing/status-error.ts';

const namespace = 'kube-system';
const name = 'example.com-hostpath';
const start = Date.UTC(2025, 0, 1);
let api: FakeKubeApi;

beforeEach(() => {
  vi.useFakeTimers({ now: start });
  api = new FakeKubeApi();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A candidate polling as late as the jitter allows (every 4.4 s), so only the watch can explain a quick take-over. */
function candidate(identity: string): {
  elector: LeaderElector;
  stop: AbortController;
  done: Promise<unknown>;
} {
  const stop = new AbortController();
  const elector = new LeaderElector({
    lock: { leases: api.resource(resources.leases), namespace, name, identity },
    callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
    releaseOnCancel: true,
    random: () => 0.999_999,
  });
  return { elector, stop, done: elector.run(stop.signal) };
}

const leases = () => api.resource(resources.leases);
const stored = (): V1Lease | undefined => api.objects(resources.leases, namespace)[0];

/** Writes the holder record another process would write. */
async function putHolder(holderIdentity: string): Promise<void> {
  const current = stored();
  const spec = { holderIdentity, leaseDurationSeconds: 15, leaseTransitions: 0 };
  if (current === undefined) await leases().create({ metadata: { name, namespace }, spec });
  else await leases().update({ ...current, spec: { ...current.spec, ...spec, renewTime: new Date() } });
}

describe('LeaderElector watching its Lease while waiting', () => {
  it('takes the Lease within milliseconds of a graceful release, not at the next 2–4.4 s retry', async () => {
    const a = candidate('a');
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate('b');
    await vi.advanceTimersByTimeAsync(3_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);

    a.stop.abort();
    await a.done;
    await vi.advanceTimersByTimeAsync(1);
    expect(b.elector.isLeader()).toBe(true);
    expect(stored()?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop.abort();
  });

  it('creates the Lease at once when it is deleted', async () => {
    await putHolder('other');
    const a = candidate('a');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(a.elector.isLeader()).toBe(false);

    await leases().delete(name, { namespace });
    await vi.advanceTimersByTimeAsync(1);
    expect(a.elector.isLeader()).toBe(true);
    expect(stored()?.spec?.holderIdentity).toBe('a');
    a.stop.abort();
  });

  it('takes over from a holder that stopped renewing exactly leaseDuration after the last renewal it saw', async () => {
    await putHolder('crashed');
    const a = candidate('a');
    // The holder renews every 2 s until 10 s; polling alone would see the last renewal only at
    // 13.2 s (polls at 0, 4.4, 8.8, 13.2 s) and wait until 28.2 s.
    for (let renewal = 1; renewal <= 5; renewal++) {
      await vi.advanceTimersByTimeAsync(2_000);
      await putHolder('crashed');
    }
    const lastRenewal = Date.now();
    await vi.advanceTimersByTimeAsync(14_900);
    expect(a.elector.isLeader()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.elector.isLeader()).toBe(true);
    expect(new Date(String(stored()?.spec?.acquireTime)).getTime()).toBe(lastRenewal + 15_000);
    a.stop.abort();
  });

  it('still polls, without watching again, when it may not watch Leases', async () => {
    api.failNext({ verb: 'watch', resource: 'leases', error: statusError('Forbidden', 'no watch') });
    await putHolder('other');
    const a = candidate('a');
    await vi.advanceTimersByTimeAsync(1_000);
    await putHolder('');
    await vi.advanceTimersByTimeAsync(3_000);
    expect(a.elector.isLeader()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(a.elector.isLeader()).toBe(true);
    expect(api.actions().filter((action) => action.verb === 'watch')).toHaveLength(1);
    a.stop.abort();
  });
});
