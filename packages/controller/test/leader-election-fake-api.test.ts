// Leader election against the in-memory API, whose objects go through the same codec as the real client.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { LeaderElector } from '../src/leader-election/leader-elector.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';

let api: FakeKubeApi;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
  api = new FakeKubeApi();
});
afterEach(() => {
  vi.useRealTimers();
});

function elector(
  identity: string,
  releaseOnCancel = true,
): { elector: LeaderElector; stop: AbortController } {
  const stop = new AbortController();
  const le = new LeaderElector({
    lock: {
      leases: api.resource(resources.leases),
      namespace: 'kube-system',
      name: 'example.com-hostpath',
      identity,
    },
    callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
    releaseOnCancel,
    random: () => 0,
  });
  return { elector: le, stop };
}

const lease = () => api.objects(resources.leases, 'kube-system')[0];

describe('LeaderElector against the API', () => {
  it('writes MicroTime timestamps and keeps acquireTime across renewals after a round trip', async () => {
    const a = elector('a');
    void a.elector.run(a.stop.signal);
    await vi.advanceTimersByTimeAsync(100);
    const acquired = lease()?.spec?.acquireTime;
    expect(String(acquired)).toMatch(/^2025-01-01T00:00:00\.000000Z$/);

    await vi.advanceTimersByTimeAsync(4_000);
    expect(lease()?.spec?.acquireTime).toEqual(acquired);
    expect(String(lease()?.spec?.renewTime)).toBe('2025-01-01T00:00:04.000000Z');
  });

  it('lets exactly one of two candidates lead and hands over on a graceful stop', async () => {
    const a = elector('a');
    const b = elector('b');
    const aDone = a.elector.run(a.stop.signal);
    await vi.advanceTimersByTimeAsync(100);
    void b.elector.run(b.stop.signal);
    await vi.advanceTimersByTimeAsync(30_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);

    a.stop.abort();
    await expect(aDone).resolves.toBe('cancelled');
    await vi.advanceTimersByTimeAsync(2_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([false, true]);
    expect(lease()?.spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 1,
      leaseDurationSeconds: 15,
    });
    b.stop.abort();
  });
});
