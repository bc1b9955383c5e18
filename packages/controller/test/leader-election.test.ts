import type { V1Lease } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../src/client/api-error.ts';
import { type CallOptions, type ResourceClient, resources } from '../src/client/resource-client.ts';
import type { EventRecorder } from '../src/events/event-recorder.ts';
import {
  type LeaderCallbacks,
  type LeaderElectionOutcome,
  LeaderElector,
  type LeaderElectorOptions,
} from '../src/leader-election/leader-elector.ts';

/** An in-memory Lease store with resourceVersions, conflicts, and switchable outages. */
class LeaseStore {
  lease: V1Lease | undefined;
  rv = 0;
  /** `fail`: reject as a transport error; `hang`: never answer, not even on abort. */
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  writes: V1Lease[] = [];

  client(): ResourceClient<V1Lease> {
    const call = async <T>(options: CallOptions | undefined, fn: () => T): Promise<T> => {
      if (this.mode === 'hang') return new Promise<T>(() => {});
      if (options?.signal?.aborted) throw options.signal.reason;
      if (this.mode === 'fail') throw new Error('connect ECONNREFUSED');
      await Promise.resolve();
      return fn();
    };
    const unsupported = (): never => {
      throw new Error('not used by leader election');
    };
    return {
      descriptor: resources.leases,
      get: (_name, options) =>
        call(options, () => {
          if (!this.lease) throw new ApiError(404, 'not found', { reason: 'NotFound' });
          return structuredClone(this.lease);
        }),
      create: (lease, options) =>
        call(options, () => {
          if (this.lease) throw new ApiError(409, 'exists', { reason: 'AlreadyExists' });
          return this.#store(lease);
        }),
      update: (lease, options) =>
        call(options, () => {
          if (!this.lease) throw new ApiError(404, 'not found', { reason: 'NotFound' });
          if (lease.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion) {
            throw new ApiError(409, 'conflict', { reason: 'Conflict' });
          }
          return this.#store(lease);
        }),
      list: unsupported,
      watch: unsupported,
      patch: unsupported,
      delete: unsupported,
    };
  }

  /** Writes a spec as another process would (bumping the resourceVersion). */
  put(spec: NonNullable<V1Lease['spec']>): void {
    this.#store({ metadata: { name: 'lock', namespace: 'ns', ...this.lease?.metadata }, spec });
  }

  get spec(): NonNullable<V1Lease['spec']> {
    return this.lease?.spec ?? {};
  }

  #store(lease: V1Lease): V1Lease {
    this.rv++;
    this.lease = structuredClone({
      ...lease,
      metadata: { ...lease.metadata, uid: 'lease-uid', resourceVersion: String(this.rv) },
    });
    this.writes.push(structuredClone(this.lease));
    return structuredClone(this.lease);
  }
}

interface Candidate {
  elector: LeaderElector;
  controller: AbortController;
  started: AbortSignal[];
  stopped: number;
  newLeaders: string[];
  events: string[];
  run(): Promise<LeaderElectionOutcome>;
}

function candidate(
  store: LeaseStore,
  identity: string,
  options: Partial<LeaderElectorOptions> & { work?: (signal: AbortSignal) => Promise<void> } = {},
): Candidate {
  const controller = new AbortController();
  const self: Candidate = {
    controller,
    started: [],
    stopped: 0,
    newLeaders: [],
    events: [],
    elector: undefined as unknown as LeaderElector,
    run: () => self.elector.run(controller.signal),
  };
  const callbacks: LeaderCallbacks = {
    onStartedLeading: (signal) => {
      self.started.push(signal);
      return options.work?.(signal);
    },
    onStoppedLeading: () => {
      self.stopped++;
    },
    onNewLeader: (leader) => {
      self.newLeaders.push(leader);
    },
  };
  const recorder: EventRecorder = {
    event: (object, type, reason, message) => {
      self.events.push(`${object.kind}/${object.metadata?.name} ${type} ${reason}: ${message}`);
    },
    dropped: 0,
    flush: async () => {},
    close: async () => {},
  };
  self.elector = new LeaderElector({
    lock: { leases: store.client(), namespace: 'ns', name: 'lock', identity },
    callbacks,
    recorder,
    random: () => 0,
    ...options,
  });
  return self;
}

/** Advances fake time in small steps so every async hop between timers runs. */
async function advance(ms: number, step = 100): Promise<void> {
  for (let done = 0; done < ms; done += step) await vi.advanceTimersByTimeAsync(Math.min(step, ms - done));
}

/** Leader work that, once aborted, takes `drainMs` to finish; `drained()` tells whether it has. */
function drainingWork(drainMs: number): {
  run: (signal: AbortSignal) => Promise<void>;
  drained: () => boolean;
} {
  let drained = false;
  return {
    run: (signal) =>
      new Promise<void>((resolve) => {
        signal.addEventListener('abort', () =>
          setTimeout(() => {
            drained = true;
            resolve();
          }, drainMs),
        );
      }),
    drained: () => drained,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString();
const timeOf = (value: unknown): number => new Date(value as string).getTime();

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeaderElector configuration', () => {
  const base = (overrides: Partial<LeaderElectorOptions>): (() => LeaderElector) => {
    const callbacks = { onStartedLeading: () => {}, onStoppedLeading: () => {} };
    return () =>
      new LeaderElector({
        lock: { leases: new LeaseStore().client(), namespace: 'ns', name: 'lock', identity: 'a' },
        callbacks,
        ...overrides,
      });
  };

  it('accepts the client-go defaults of 15 s, 10 s and 2 s', () => {
    expect(base({})).not.toThrow();
  });

  it('requires leaseDuration > renewDeadline > 1.2 × retryPeriod, all positive', () => {
    expect(base({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(
      /greater than renewDeadlineMs/,
    );
    expect(base({ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toThrow(/1.2 × retryPeriodMs/);
    expect(base({ retryPeriodMs: 0 })).toThrow(/retryPeriodMs must be > 0/);
    expect(base({ leaseDurationMs: 500, renewDeadlineMs: 400, retryPeriodMs: 100 })).toThrow(/>= 1000/);
  });

  it('requires an identity, a lock name and both mandatory callbacks', () => {
    const leases = new LeaseStore().client();
    const callbacks = { onStartedLeading: () => {}, onStoppedLeading: () => {} };
    expect(
      () => new LeaderElector({ lock: { leases, namespace: 'ns', name: 'l', identity: '' }, callbacks }),
    ).toThrow(/identity/);
    expect(
      () => new LeaderElector({ lock: { leases, namespace: 'ns', name: '', identity: 'a' }, callbacks }),
    ).toThrow(/name and namespace/);
    const partial = { onStartedLeading: () => {} } as unknown as LeaderCallbacks;
    expect(
      () =>
        new LeaderElector({
          lock: { leases, namespace: 'ns', name: 'l', identity: 'a' },
          callbacks: partial,
        }),
    ).toThrow(/onStoppedLeading/);
  });
});

describe('LeaderElector acquisition', () => {
  it('creates a missing Lease and starts leading at once', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    void a.run();
    await advance(100);

    expect(a.elector.isLeader()).toBe(true);
    expect(a.started).toHaveLength(1);
    expect(a.newLeaders).toEqual(['a']);
    expect(a.events).toEqual(['Lease/lock Normal LeaderElection: a became leader']);
    expect(store.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(timeOf(store.spec.acquireTime)).toBe(1_000_000);
    expect(timeOf(store.spec.renewTime)).toBe(1_000_000);
  });

  it('respects a foreign holder until leaseDuration has passed on the local clock since the record last changed', async () => {
    const store = new LeaseStore();
    // The remote renewTime is far in the past: it must not matter.
    store.put({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 3,
      renewTime: iso(0) as never,
    });
    const a = candidate(store, 'a');
    void a.run();

    await advance(14_900);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.getLeader()).toBe('b');

    // The candidate tries again exactly at the observed expiry, not at its next jittered retry.
    await advance(100);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.newLeaders).toEqual(['b', 'a']);
    expect(store.spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 4 });
    expect(timeOf(store.spec.acquireTime)).toBe(1_015_000);
    expect(timeOf(store.spec.renewTime)).toBe(1_015_000);
  });

  it('never takes over from a holder that keeps renewing', async () => {
    const store = new LeaseStore();
    store.put({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const a = candidate(store, 'a');
    void a.run();
    for (let i = 0; i < 30; i++) {
      store.put({ ...store.spec, renewTime: iso(Date.now()) as never });
      await advance(2_000);
    }
    expect(a.elector.isLeader()).toBe(false);
    expect(a.started).toHaveLength(0);
  });

  it('takes a released Lease (empty holder) on the next attempt and counts the transition', async () => {
    const store = new LeaseStore();
    store.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 7 });
    const a = candidate(store, 'a');
    void a.run();
    await advance(100);
    expect(a.elector.isLeader()).toBe(true);
    expect(store.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 8 });
  });

  it('retries every retryPeriod stretched by up to 1.2 × jitter', async () => {
    const store = new LeaseStore();
    store.mode = 'fail';
    const gets = vi.fn();
    const client = store.client();
    const leases = {
      ...client,
      get: (name: string, o?: CallOptions) => {
        gets();
        return client.get(name, o);
      },
    };
    const elector = new LeaderElector({
      lock: { leases, namespace: 'ns', name: 'lock', identity: 'a' },
      callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
      random: () => 0.5,
    });
    void elector.run(new AbortController().signal);
    await advance(100);
    expect(gets).toHaveBeenCalledTimes(1);
    // 2 s × (1 + 0.5 × 1.2) = 3.2 s between attempts.
    await advance(3_000);
    expect(gets).toHaveBeenCalledTimes(1);
    await advance(300);
    expect(gets).toHaveBeenCalledTimes(2);
  });

  it('ends with "cancelled" and calls onStoppedLeading when cancelled before leading', async () => {
    const store = new LeaseStore();
    store.put({ holderIdentity: 'b', leaseDurationSeconds: 15 });
    const a = candidate(store, 'a');
    const outcome = a.run();
    await advance(3_000);
    a.controller.abort();
    await expect(outcome).resolves.toBe('cancelled');
    expect(a.started).toHaveLength(0);
    expect(a.stopped).toBe(1);
    expect(store.spec.holderIdentity).toBe('b');
  });
});

describe('LeaderElector renewal', () => {
  it('renews every retryPeriod, keeping acquireTime and leaseTransitions', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    void a.run();
    await advance(100);
    const acquired = timeOf(store.spec.acquireTime);

    await advance(2_000);
    expect(timeOf(store.spec.renewTime)).toBeGreaterThan(acquired);
    expect(timeOf(store.spec.acquireTime)).toBe(acquired);
    expect(store.spec.leaseTransitions).toBe(0);
    const writes = store.writes.length;
    await advance(10_000);
    expect(store.writes.length - writes).toBe(5);
    expect(a.elector.healthCheck()).toBeNull();
  });

  it('loses leadership when renewDeadline has passed since the last successful renewal was sent', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    let outcome: LeaderElectionOutcome | undefined;
    void a.run().then((o) => {
      outcome = o;
    });
    await advance(100);
    const leading = a.started[0];
    store.mode = 'fail';

    // The last success was sent at 0: the fence closes at 0 + renewDeadline, before client-go's round
    // (one retry period later plus the renew deadline) would give up.
    await advance(9_800);
    expect(outcome).toBeUndefined();
    expect(a.elector.isLeader()).toBe(true);
    await advance(200);
    expect(outcome).toBe('lost');
    expect(leading?.aborted).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.stopped).toBe(1);
    expect(a.events.at(-1)).toBe('Lease/lock Normal LeaderElection: a stopped leading');
  });

  it('falls back to a GET when the optimistic update conflicts, and yields when another candidate took the Lease', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    const outcome = a.run();
    await advance(100);
    // Another process overwrites the Lease (as after a partition); a's next renewal conflicts.
    store.put({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
      renewTime: iso(0) as never,
    });
    for (let i = 0; i < 6; i++) {
      store.put({ ...store.spec, renewTime: iso(Date.now()) as never });
      await advance(2_000);
    }
    await expect(outcome).resolves.toBe('lost');
    expect(store.spec.holderIdentity).toBe('b');
    expect(a.newLeaders).toEqual(['a', 'b']);
  });

  it('reports unhealthy once a leader stuck in renewal is past leaseDuration plus the tolerance', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    void a.run();
    await advance(100);
    store.mode = 'hang';

    await advance(15_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.healthCheck(5_000)).toBeNull();
    await advance(5_000);
    expect(a.elector.healthCheck(5_000)?.message).toMatch(/failed to renew leadership on lease ns\/lock/);
  });

  it('is healthy while not leading', () => {
    const a = candidate(new LeaseStore(), 'a');
    expect(a.elector.healthCheck()).toBeNull();
  });

  it('publishes leader_election_master_status when given a registry', async () => {
    const registry = new Registry();
    const store = new LeaseStore();
    const a = candidate(store, 'a', { registry });
    const outcome = a.run();
    await advance(100);
    const value = async (): Promise<number | undefined> =>
      (await registry.getSingleMetric('leader_election_master_status')?.get())?.values.find(
        (v) => v.labels.name === 'lock',
      )?.value;
    expect(await value()).toBe(1);
    a.controller.abort();
    await outcome;
    expect(await value()).toBe(0);
  });
});

describe('LeaderElector graceful stop', () => {
  it('with releaseOnCancel writes an empty holder, 1 s duration and unchanged transitions', async () => {
    const store = new LeaseStore();
    store.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 });
    const a = candidate(store, 'a', { releaseOnCancel: true });
    const outcome = a.run();
    await advance(4_100);
    const stoppedAt = Date.now();
    a.controller.abort();
    await advance(100);

    await expect(outcome).resolves.toBe('cancelled');
    expect(store.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 });
    expect(timeOf(store.spec.acquireTime)).toBe(stoppedAt);
    expect(timeOf(store.spec.renewTime)).toBe(stoppedAt);
    expect(a.started[0]?.aborted).toBe(true);
    expect(a.stopped).toBe(1);
    expect(a.events).toEqual([
      'Lease/lock Normal LeaderElection: a became leader',
      'Lease/lock Normal LeaderElection: a stopped leading',
    ]);
  });

  it('hands over to a waiting candidate within one retry period', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a', { releaseOnCancel: true });
    const b = candidate(store, 'b');
    void a.run();
    await advance(100);
    void b.run();
    await advance(4_000);
    expect(b.elector.isLeader()).toBe(false);

    a.controller.abort();
    const stoppedAt = Date.now();
    while (!b.elector.isLeader()) await advance(100);
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(2_000 * 2.2);
    expect(store.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('keeps renewing until the leader work has drained, then releases', async () => {
    const store = new LeaseStore();
    const work = drainingWork(20_000);
    const a = candidate(store, 'a', { releaseOnCancel: true, work: work.run });
    const outcome = a.run();
    await advance(100);
    a.controller.abort();

    await advance(19_000);
    expect(a.started[0]?.aborted).toBe(true);
    expect(store.spec.holderIdentity).toBe('a');
    expect(Date.now() - timeOf(store.spec.renewTime)).toBeLessThanOrEqual(2_000);
    expect(a.stopped).toBe(0);

    await advance(1_100);
    await expect(outcome).resolves.toBe('cancelled');
    expect(work.drained()).toBe(true);
    expect(store.spec.holderIdentity).toBe('');
  });

  it('without releaseOnCancel leaves the Lease to expire', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a');
    const outcome = a.run();
    await advance(100);
    a.controller.abort();
    await expect(outcome).resolves.toBe('cancelled');
    expect(store.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15 });
  });

  it('on a lost round stops the work at once and releases only after it has drained', async () => {
    const store = new LeaseStore();
    const work = drainingWork(5_000);
    const a = candidate(store, 'a', { releaseOnCancel: true, work: work.run });
    let outcome: LeaderElectionOutcome | undefined;
    void a.run().then((o) => {
      outcome = o;
    });
    await advance(100);
    store.mode = 'fail';
    await advance(9_800);
    // The API answers again, but too late: the fence closed at 10 s, and a lapse is never undone.
    store.mode = 'ok';
    await advance(300);

    expect(a.elector.isLeader()).toBe(false);
    expect(a.started[0]?.aborted).toBe(true);
    expect(outcome).toBeUndefined();
    expect(store.spec.holderIdentity).toBe('a');

    await advance(4_500);
    expect(work.drained()).toBe(false);
    expect(store.spec.holderIdentity).toBe('a');
    await advance(500);
    expect(work.drained()).toBe(true);
    expect(outcome).toBe('lost');
    expect(store.spec.holderIdentity).toBe('');
    expect(a.stopped).toBe(1);
  });

  it('does not release a Lease another candidate holds by now', async () => {
    const store = new LeaseStore();
    const a = candidate(store, 'a', { releaseOnCancel: true });
    const outcome = a.run();
    await advance(100);
    store.mode = 'fail';
    await advance(12_000);
    store.mode = 'ok';
    store.put({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
    await expect(outcome).resolves.toBe('lost');
    await advance(100);
    expect(store.spec.holderIdentity).toBe('b');
  });
});

describe('LeaderElector with competing candidates', () => {
  it('never lets two candidates lead at once, and a stopped leader is replaced', async () => {
    const store = new LeaseStore();
    const candidates = ['a', 'b', 'c'].map((id) => candidate(store, id, { random: Math.random }));
    for (const c of candidates) void c.run();
    for (let t = 0; t < 60_000; t += 100) {
      await vi.advanceTimersByTimeAsync(100);
      expect(candidates.filter((c) => c.elector.isLeader()).length).toBeLessThanOrEqual(1);
    }
    const leaders = candidates.filter((c) => c.elector.isLeader());
    expect(leaders).toHaveLength(1);
    const [leader] = leaders;
    leader?.controller.abort();
    // Without release, a successor takes over after leaseDuration plus at most one jittered retry.
    for (let t = 0; t < 15_000 + 4_400; t += 100) {
      await vi.advanceTimersByTimeAsync(100);
      expect(candidates.filter((c) => c.elector.isLeader()).length).toBeLessThanOrEqual(1);
    }
    const successors = candidates.filter((c) => c.elector.isLeader());
    expect(successors).toHaveLength(1);
    expect(successors[0]).not.toBe(leader);
    expect(store.spec.leaseTransitions).toBe(1);
  });
});
