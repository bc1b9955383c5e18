// Lease leader election against the real API server at the provisioner's timings (15 s / 10 s /
// 2 s): two candidates never lead at once, a gracefully stopped leader is replaced within 2 s, and a
// crashed one within leaseDuration + retryPeriod.
import { waitFor } from '@kube-provisioner/testenv';
import type { V1Lease } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ResourceClient, resources } from '../src/client/resource-client.ts';
import { type LeaderElectionOutcome, LeaderElector } from '../src/leader-election/leader-elector.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const { env, client } = useE2eCluster();
const leaseDurationMs = 15_000;
const retryPeriodMs = 2_000;
let namespace = '';

beforeAll(async () => {
  namespace = await env.namespace('leader-election');
});

/**
 * A Lease client that can be cut off like a crashed process: afterwards every call fails as if the
 * server refused the connection, so the holder can neither renew nor release.
 */
function severable(leases: ResourceClient<V1Lease>): { leases: ResourceClient<V1Lease>; sever(): void } {
  let severed = false;
  const guard = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => {
    return async (...args: A): Promise<R> => {
      if (severed) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      return call(...args);
    };
  };
  return {
    leases: {
      descriptor: leases.descriptor,
      get: guard(leases.get.bind(leases)),
      list: guard(leases.list.bind(leases)),
      watch: guard(leases.watch.bind(leases)),
      create: guard(leases.create.bind(leases)),
      update: guard(leases.update.bind(leases)),
      patch: guard(leases.patch.bind(leases)),
      delete: guard(leases.delete.bind(leases)),
    },
    sever: () => {
      severed = true;
    },
  };
}

interface Candidate {
  readonly identity: string;
  readonly elector: LeaderElector;
  readonly done: Promise<LeaderElectionOutcome>;
  /** Stops gracefully: leading ends and the Lease is released. */
  stop(): Promise<LeaderElectionOutcome>;
  /** Simulates a crash: the candidate loses its connection to the API server for good. */
  crash(): void;
}

const running: Candidate[] = [];
/** Leadership starts that found another candidate leading at that instant. */
const overlaps: string[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((candidate) => candidate.stop()));
});

function candidate(lease: string, identity: string): Candidate {
  const stop = new AbortController();
  const connection = severable(client().resource(resources.leases));
  const elector: LeaderElector = new LeaderElector({
    lock: { leases: connection.leases, namespace, name: lease, identity },
    leaseDurationMs,
    renewDeadlineMs: 10_000,
    retryPeriodMs,
    releaseOnCancel: true,
    callbacks: {
      onStartedLeading: () => {
        const others = running.filter((other) => other.elector !== elector && other.elector.isLeader());
        if (others.length > 0) overlaps.push(`${identity} started while ${others[0]?.identity} led`);
      },
      onStoppedLeading: () => {},
    },
  });
  const done = elector.run(stop.signal);
  const self: Candidate = {
    identity,
    elector,
    done,
    stop: () => {
      stop.abort();
      return done;
    },
    crash: connection.sever,
  };
  running.push(self);
  return self;
}

/** Samples every candidate's `isLeader()` every 5 ms until stopped; returns the samples with two leaders. */
function sampleLeaders(): () => string[] {
  const doubles: string[] = [];
  let samples = 0;
  const timer = setInterval(() => {
    samples += 1;
    const leaders = running.filter((c) => c.elector.isLeader()).map((c) => c.identity);
    if (leaders.length > 1) doubles.push(`sample ${samples}: ${leaders.join(' and ')}`);
  }, 5);
  return () => {
    clearInterval(timer);
    expect(samples).toBeGreaterThan(0);
    return doubles;
  };
}

const timeOf = (time: unknown): number => new Date(String(time)).getTime();

/** Resolves with the milliseconds from now until `c` leads. */
async function leadsWithin(c: Candidate, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await waitFor(() => c.elector.isLeader(), {
    timeoutMs,
    intervalMs: 5,
    description: `${c.identity} to lead`,
  });
  return Date.now() - started;
}

describe('LeaderElector against kube-apiserver', () => {
  it('hands over within 2 s of a graceful stop, again and again, never with two leaders', async () => {
    const stopSampling = sampleLeaders();
    let leader = candidate('graceful', 'first');
    await leadsWithin(leader, 30_000);

    for (let handOver = 1; handOver <= 3; handOver++) {
      const successor = candidate('graceful', `successor-${handOver}`);
      // The successor is campaigning (its first attempt found the Lease held) before the stop.
      await waitFor(() => successor.elector.getLeader() === leader.identity, {
        timeoutMs: 30_000,
        description: `${successor.identity} to see ${leader.identity} lead`,
      });
      expect(successor.elector.isLeader()).toBe(false);

      const stopping = leader.stop();
      const elapsed = await leadsWithin(successor, 10_000);
      await expect(stopping).resolves.toBe('cancelled');
      expect(elapsed).toBeLessThan(2_000);
      leader = successor;
    }
    expect(stopSampling()).toEqual([]);
    expect(overlaps).toEqual([]);
  });

  it('replaces a crashed leader within leaseDuration + retryPeriod, and not before its lease expires', async () => {
    const stopSampling = sampleLeaders();
    const crashed = candidate('crash', 'crashed');
    await leadsWithin(crashed, 30_000);
    const successor = candidate('crash', 'successor');
    await waitFor(() => successor.elector.getLeader() === 'crashed', {
      timeoutMs: 30_000,
      description: 'the successor to see the leader',
    });
    // Renewals go on while the successor waits, so it judges expiry by a renewal it saw.
    const leases = client().resource(resources.leases);
    await waitFor(
      async () => {
        const { spec } = await leases.get('crash', { namespace });
        const renewedFor = timeOf(spec?.renewTime) - timeOf(spec?.acquireTime);
        return renewedFor >= 2 * retryPeriodMs;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'two renewals' },
    );

    crashed.crash();
    const elapsed = await leadsWithin(successor, leaseDurationMs + 10_000);
    // Renewals succeed one retry period (plus a request) apart, so the last one landed at most that
    // long before the crash, or just after it if it was in flight; the successor tries exactly at the
    // expiry it observed (no jitter). Only request latency needs a tolerance: 500 ms early; late, the
    // timers and requests of a 2-core CI machine that also runs the unit suite's CLI processes
    // (measured up to 2.3 s), so 3 s. The exact-expiry rule itself is pinned on a manual clock in
    // leader-election.test.ts.
    const latencyToleranceMs = 500;
    const lateToleranceMs = 3_000;
    expect(elapsed).toBeGreaterThanOrEqual(leaseDurationMs - retryPeriodMs - latencyToleranceMs);
    expect(elapsed).toBeLessThanOrEqual(leaseDurationMs + retryPeriodMs + lateToleranceMs);
    // The crashed leader gave up by itself after its renew deadline, before the successor took over.
    await expect(crashed.done).resolves.toBe('lost');
    expect(stopSampling()).toEqual([]);
    expect(overlaps).toEqual([]);
  });
});
