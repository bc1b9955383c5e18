// The LeaderElector's own typed events, on the in-memory API: `leading` when it acquires the Lease,
// `stoppedLeading` with the reason when leading ends, nothing for a candidate that never led, and
// the order against the client-go style callbacks.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { LeaderElector } from '../src/leader-election/leader-elector.ts';
import { isLeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';

let api: FakeKubeApi;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
  api = new FakeKubeApi();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A candidate whose events and callbacks are logged, in order, to `log`. */
function candidate(identity: string, log: string[]): { elector: LeaderElector; stop: AbortController } {
  const stop = new AbortController();
  const elector = new LeaderElector({
    lock: { leases: api.resource(resources.leases), namespace: 'kube-system', name: 'lease', identity },
    callbacks: {
      onStartedLeading: () => void log.push(`${identity} onStartedLeading`),
      onStoppedLeading: () => void log.push(`${identity} onStoppedLeading`),
    },
    releaseOnCancel: true,
    random: () => 0,
  });
  elector.on('leading', (event) => log.push(`${identity} leading ${event.lease} ${event.identity}`));
  elector.on('stoppedLeading', (event) =>
    log.push(`${identity} stoppedLeading ${event.reason} after ${event.ledMs} ms`),
  );
  return { elector, stop };
}

it('emits leading before onStartedLeading and stoppedLeading (stopRequested) before onStoppedLeading', async () => {
  const log: string[] = [];
  const a = candidate('a', log);
  const done = a.elector.run(a.stop.signal);
  await vi.advanceTimersByTimeAsync(4_000);
  a.stop.abort();
  await expect(done).resolves.toBe('cancelled');
  expect(log).toEqual([
    'a leading kube-system/lease a',
    'a onStartedLeading',
    expect.stringMatching(/^a stoppedLeading stopRequested after 4\d{3}(\.\d+)? ms$/u),
    'a onStoppedLeading',
  ]);
});

it('emits no leadership events for a candidate that never led', async () => {
  const log: string[] = [];
  const a = candidate('a', log);
  const b = candidate('b', log);
  void a.elector.run(a.stop.signal);
  await vi.advanceTimersByTimeAsync(100);
  const bDone = b.elector.run(b.stop.signal);
  await vi.advanceTimersByTimeAsync(5_000);
  b.stop.abort();
  await bDone;
  a.stop.abort();
  expect(log.filter((line) => line.startsWith('b'))).toEqual(['b onStoppedLeading']);
});

it('emits stoppedLeading with reason leaseLost and the lapse error when renewals fail', async () => {
  const a = candidate('a', []);
  const stopped: unknown[] = [];
  a.elector.on('stoppedLeading', (event) => stopped.push(event));
  const done = a.elector.run(a.stop.signal);
  await vi.advanceTimersByTimeAsync(100);
  api.prependReactor({ resource: 'leases' }, () => {
    throw new Error('api down');
  });
  await vi.advanceTimersByTimeAsync(15_000);
  await expect(done).resolves.toBe('lost');
  expect(stopped).toHaveLength(1);
  expect(stopped[0]).toMatchObject({ reason: 'leaseLost', lease: 'kube-system/lease', identity: 'a' });
  expect(isLeadershipLapsedError((stopped[0] as { error: unknown }).error)).toBe(true);
});

it('keeps electing when a listener throws', async () => {
  const log: string[] = [];
  const a = candidate('a', log);
  a.elector.on('leading', () => {
    throw new Error('listener bug');
  });
  const done = a.elector.run(a.stop.signal);
  await vi.advanceTimersByTimeAsync(4_000);
  expect(a.elector.isLeader()).toBe(true);
  a.stop.abort();
  await expect(done).resolves.toBe('cancelled');
  expect(log).toContain('a onStartedLeading');
});
