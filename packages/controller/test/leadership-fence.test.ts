import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { isLeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { isLeaderElectionLostError } from '../src/leader-election-lost-error.ts';
import type { LeaseLossPolicy } from '../src/process-options.ts';
import type { ManualClock } from '../src/testing/manual-clock.ts';
import { statusError } from '../src/testing/status-error.ts';
import { settle } from '../src/testing/wait.ts';
import { annBetaStorageProvisioner, annSelectedNode, finalizerPV } from '../src/wire-names.ts';
import {
  deleteCounts,
  gate,
  type HarnessOptions,
  manualHarness,
  newClaim,
  newStorageClass,
  provisionCounts,
  provisionerName,
  pump,
  releasedVolume,
  volumeFor,
} from './controller-fixtures.ts';

/** Longer than the lease duration (15 s). */
const pauseMs = 20_000;

const storageClass = newStorageClass('class-1', provisionerName);
const claim = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);

/** How the pause ends: I/O callbacks first (`freeze`), or timers first (`advance`). */
const resumes = {
  'I/O before timers': (clock: ManualClock): void => clock.freeze(pauseMs),
  'timers before I/O': (clock: ManualClock): void => clock.advance(pauseMs),
} as const;

/**
 * A leading controller on the manual clock that stops for good on a lapse (`onLost: 'reject'` unless
 * told otherwise), so that nothing of a later term mixes in; `outcome()` is how `run()` settled, once it has.
 */
async function leader(options: HarnessOptions, onLost: LeaseLossPolicy = 'reject') {
  const manual = manualHarness({
    leaderElection: { namespace: 'kube-system', onLost },
    ...options,
  });
  let outcome: unknown = 'running';
  const stop = new AbortController();
  void manual.harness.controller.run(stop.signal).then(
    () => {
      outcome = 'stopped';
    },
    (err: unknown) => {
      outcome = err;
    },
  );
  return { ...manual, stop, outcome: () => outcome };
}

/** Reasons of the events written about claims and volumes so far (not the Lease's). */
const reasons = (events: string[]): string[] =>
  events.map((event) => event.split(':')[0] ?? '').filter((reason) => reason !== 'LeaderElection');

/**
 * A leader whose first `verb` call on a PV is sent within its term and answered (by the server, or with
 * what `answer` throws) only once `pause` has ended the term, as a socket's buffer holds an answer while
 * the process is stopped.
 */
async function answeredAfterPause(
  options: HarnessOptions,
  verb: 'create' | 'delete',
  pause: (clock: ManualClock) => void,
  answer: () => undefined = () => undefined,
) {
  const { clock, api, harness, outcome } = await leader(options);
  const answered = gate();
  let calls = 0;
  api.prependReactor({ verb, resource: 'persistentvolumes' }, async () => {
    calls++;
    await answered.wait;
    return answer();
  });
  await pump(clock, 2_000);
  expect(calls).toBe(1);

  pause(clock);
  answered.open();
  await settle(20);
  await pump(clock, 2_000);
  expect(isLeaderElectionLostError(outcome())).toBe(true);
  return { harness, calls: () => calls };
}

describe('leadership fence: provisioning', () => {
  for (const [resume, pause] of Object.entries(resumes)) {
    it(`does not save the PV when paused between provision and save (${resume})`, async () => {
      const { clock, harness, outcome } = await leader({ objects: [storageClass, claim] });
      const provisioned = gate();
      harness.provisioner.provisionResult = async (options) => {
        await provisioned.wait;
        return { pv: volumeFor(options) };
      };
      await pump(clock, 2_000);
      expect(harness.provisioner.provisionCalls).toHaveLength(1);

      pause(clock);
      provisioned.open();
      await settle(20);
      expect(harness.volumes()).toEqual([]);

      await pump(clock, 2_000);
      expect(isLeaderElectionLostError(outcome())).toBe(true);
      expect(harness.volumes()).toEqual([]);
      expect(reasons(harness.events())).toEqual(['Provisioning']);
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
    });
  }

  it('does not call provision when paused after shouldProvision', async () => {
    const { clock, harness } = await leader({ objects: [storageClass, claim] });
    const qualified = gate();
    let asked = 0;
    Object.assign(harness.provisioner, {
      shouldProvision: async () => {
        asked++;
        await qualified.wait;
        return true;
      },
    });
    await pump(clock, 2_000);
    expect(asked).toBe(1);

    clock.freeze(pauseMs);
    qualified.open();
    await settle(20);
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toEqual([]);
    expect(reasons(harness.events())).toEqual([]);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
  });

  it('neither records ProvisioningFailed nor counts a failure when provision fails after the pause', async () => {
    const { clock, harness } = await leader({ objects: [storageClass, claim] });
    const failed = gate();
    harness.provisioner.provisionResult = async () => {
      await failed.wait;
      return { error: new Error('backend unreachable'), state: 'Reschedule' };
    };
    await pump(clock, 2_000);

    clock.freeze(pauseMs);
    failed.open();
    await settle(20);
    await pump(clock, 2_000);
    expect(reasons(harness.events())).toEqual(['Provisioning']);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
  });

  it('does not remove selected-node when provision asks to reschedule after the pause', async () => {
    const wffc = newStorageClass('class-1', provisionerName, { volumeBindingMode: 'WaitForFirstConsumer' });
    const wffcClaim = newClaim('claim-1', 'uid-1-1', 'class-1', undefined, '', {
      [annBetaStorageProvisioner]: provisionerName,
      [annSelectedNode]: 'node-1',
    });
    const { clock, api, harness } = await leader({ objects: [wffc, wffcClaim] });
    const failed = gate();
    harness.provisioner.provisionResult = async () => {
      await failed.wait;
      return { error: new Error('no space on node-1'), state: 'Reschedule' };
    };
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);

    clock.freeze(pauseMs);
    failed.open();
    await settle(20);
    await pump(clock, 2_000);
    const claimWrites = api
      .actions()
      .filter(
        (action) =>
          action.resource === 'persistentvolumeclaims' &&
          action.verb !== 'list' &&
          action.verb !== 'watch' &&
          action.verb !== 'get',
      );
    expect(claimWrites).toEqual([]);
    expect(harness.claims()[0]?.metadata?.annotations?.[annSelectedNode]).toBe('node-1');
  });

  it('does not retry the save nor clean up the asset after the pause (blocking store)', async () => {
    const { clock, api, harness } = await leader({
      objects: [storageClass, claim],
      pvSave: { strategy: 'blocking' },
    });
    const creates = gate();
    let createCalls = 0;
    api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, async () => {
      createCalls++;
      await creates.wait;
      throw new Error('etcd unavailable');
    });
    await pump(clock, 2_000);
    expect(createCalls).toBe(1);

    clock.freeze(pauseMs);
    creates.open();
    await settle(20);
    await pump(clock, 2_000);
    expect(createCalls).toBe(1);
    expect(harness.provisioner.deleteCalls).toEqual([]);
    expect(reasons(harness.events())).toEqual(['Provisioning']);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
  });

  const stores = {
    'blocking store': { pvSave: { strategy: 'blocking' } },
    'queue store': { pvSave: { strategy: 'queue' } },
  } as const;
  for (const [store, storeOptions] of Object.entries(stores)) {
    for (const [resume, pause] of Object.entries(resumes)) {
      it(`does not report a PV create whose answer comes back after the pause (${store}, ${resume})`, async () => {
        const options = { objects: [storageClass, claim], ...storeOptions };
        const { harness, calls } = await answeredAfterPause(options, 'create', pause);
        // The server saved it; the successor finds it. This replica reports nothing and cleans nothing up.
        expect(harness.volumes()).toHaveLength(1);
        expect(reasons(harness.events())).toEqual(['Provisioning']);
        expect(harness.provisioner.deleteCalls).toEqual([]);
        expect(calls()).toBe(1);
        expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
      });

      it(`does not report a PV create whose failure comes back after the pause (${store}, ${resume})`, async () => {
        const options = { objects: [storageClass, claim], ...storeOptions };
        const { harness, calls } = await answeredAfterPause(options, 'create', pause, () => {
          throw statusError('InternalError', 'etcd unavailable');
        });
        expect(harness.volumes()).toEqual([]);
        expect(reasons(harness.events())).toEqual(['Provisioning']);
        expect(harness.provisioner.deleteCalls).toEqual([]);
        expect(calls()).toBe(1);
        expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
      });
    }
  }

  it('does not save a queued PV after the pause (queue store)', async () => {
    const { clock, api, harness } = await leader({
      objects: [storageClass, claim],
      pvSave: { strategy: 'queue' },
    });
    let createCalls = 0;
    const remove = api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
      createCalls++;
      throw new Error('etcd unavailable');
    });
    await pump(clock, 2_000);
    // The inline create and the first background retries failed; the next retry would succeed.
    expect(createCalls).toBeGreaterThan(0);
    remove();

    clock.freeze(pauseMs);
    await settle(20);
    await pump(clock, 2_000);
    expect(harness.volumes()).toEqual([]);
  });
});

describe('leadership fence: deletion', () => {
  for (const [resume, pause] of Object.entries(resumes)) {
    it(`does not delete the PV object when paused between delete and the API call (${resume})`, async () => {
      const { clock, harness, outcome } = await leader({ objects: [storageClass, releasedVolume()] });
      const deleted = gate();
      harness.provisioner.deleteResult = () => deleted.wait;
      await pump(clock, 2_000);
      expect(harness.provisioner.deleteCalls).toHaveLength(1);

      pause(clock);
      deleted.open();
      await settle(20);
      expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pv-1']);

      await pump(clock, 2_000);
      expect(isLeaderElectionLostError(outcome())).toBe(true);
      expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pv-1']);
      expect(reasons(harness.events())).toEqual([]);
      expect(await deleteCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
    });
  }

  it('does not call delete when paused after shouldDelete', async () => {
    const { clock, harness } = await leader({ objects: [storageClass, releasedVolume()] });
    const guarded = gate();
    let asked = 0;
    Object.assign(harness.provisioner, {
      shouldDelete: async () => {
        asked++;
        await guarded.wait;
        return true;
      },
    });
    await pump(clock, 2_000);
    expect(asked).toBe(1);

    clock.freeze(pauseMs);
    guarded.open();
    await settle(20);
    await pump(clock, 2_000);
    expect(harness.provisioner.deleteCalls).toEqual([]);
    expect(await deleteCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
  });

  it('does not remove the finalizer when paused after deleting the PV object', async () => {
    const { clock, api, harness } = await leader({
      objects: [storageClass, releasedVolume({ finalizers: [finalizerPV] })],
      addFinalizer: true,
    });
    const deleted = gate();
    let patches = 0;
    api.prependReactor({ verb: 'patch', resource: 'persistentvolumes' }, () => {
      patches++;
      return undefined;
    });
    api.prependReactor({ verb: 'delete', resource: 'persistentvolumes' }, async () => {
      await deleted.wait;
      return undefined;
    });
    await pump(clock, 2_000);
    expect(harness.provisioner.deleteCalls).toHaveLength(1);

    clock.freeze(pauseMs);
    deleted.open();
    await settle(20);
    await pump(clock, 2_000);
    expect(patches).toBe(0);
    expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]);
  });

  for (const [resume, pause] of Object.entries(resumes)) {
    it(`does not report a PV delete whose answer comes back after the pause (${resume})`, async () => {
      const { harness } = await answeredAfterPause(
        { objects: [storageClass, releasedVolume()] },
        'delete',
        pause,
      );
      // Whether the server deleted it or not, the successor sees for itself; this replica reports
      // nothing of a term that ended.
      expect(await deleteCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
    });
  }

  it('does not add the finalizer to a volume first seen after the pause', async () => {
    const { clock, api, harness } = await leader({ objects: [storageClass], addFinalizer: true });
    await pump(clock, 2_000);

    clock.freeze(pauseMs);
    const bound = { ...releasedVolume(), status: { phase: 'Bound' } };
    await api.resource(resources.persistentVolumes).create(bound);
    await settle(20);
    await pump(clock, 2_000);
    expect(harness.volumes()[0]?.metadata?.finalizers).toBeUndefined();
  });
});

describe('leadership fence: the operation context', () => {
  it('assertLeader passes while the Lease is fresh and throws a LeadershipLapsedError after a pause', async () => {
    const { clock, harness } = await leader({ objects: [storageClass, claim] });
    const checked = gate();
    const results: unknown[] = [];
    harness.provisioner.provision = async (options, context) => {
      harness.provisioner.provisionCalls.push(options);
      context.assertLeader();
      results.push('fresh');
      await checked.wait;
      try {
        context.assertLeader();
        results.push('still fresh');
      } catch (err) {
        results.push(err);
      }
      return { pv: volumeFor(options) };
    };
    await pump(clock, 2_000);
    clock.freeze(pauseMs);
    checked.open();
    await settle(20);
    expect(results[0]).toBe('fresh');
    expect(isLeadershipLapsedError(results[1])).toBe(true);
  });

  it('aborts the signal when the renew deadline passes without a renewal', async () => {
    const { clock, api, harness } = await leader({ objects: [storageClass, claim] });
    let aborted: unknown;
    let startedAt = 0;
    harness.provisioner.provision = async (options, context) => {
      harness.provisioner.provisionCalls.push(options);
      startedAt = clock.now();
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      aborted = context.signal.reason;
      return { pv: volumeFor(options) };
    };
    await pump(clock, 2_000);
    api.prependReactor({ resource: 'leases' }, () => {
      throw new Error('api down');
    });
    await pump(clock, 12_000, 50);
    expect(isLeadershipLapsedError(aborted)).toBe(true);
    expect(startedAt).toBeGreaterThan(0);
    expect(harness.volumes()).toEqual([]);
  });
});

describe('leadership fence: after a lapse', () => {
  it('campaigns again by default and acts again only after writing the Lease afresh', async () => {
    const { clock, api, harness, outcome } = await leader(
      {
        objects: [storageClass, claim],
      },
      'campaign',
    );
    const provisioned = gate();
    harness.provisioner.provisionResult = async (options) => {
      await provisioned.wait;
      return { pv: volumeFor(options) };
    };
    await pump(clock, 2_000);
    const frozenAt = api.actions().length;

    clock.freeze(pauseMs);
    provisioned.open();
    await settle(20);
    await pump(clock, 5_000);
    expect(outcome()).toBe('running');
    expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']);
    expect(harness.provisioner.provisionCalls).toHaveLength(2);
    const after = api.actions().slice(frozenAt);
    const leaseWrite = after.findIndex((a) => a.resource === 'leases' && a.verb === 'update');
    const pvCreate = after.findIndex((a) => a.resource === 'persistentvolumes' && a.verb === 'create');
    expect(leaseWrite).toBeGreaterThanOrEqual(0);
    expect(pvCreate).toBeGreaterThan(leaseWrite);
  });
});

describe('leadership fence: stopping', () => {
  it('a Lease lost during a graceful stop aborts the remaining work at once, not after the grace period', async () => {
    const { clock, api, harness, stop, outcome } = await leader(
      {
        objects: [storageClass, claim],
      },
      'campaign',
    );
    let abortedAt: number | undefined;
    harness.provisioner.provision = async (options, context) => {
      harness.provisioner.provisionCalls.push(options);
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      abortedAt = clock.now();
      return { error: context.signal.reason as Error, state: 'Finished' };
    };
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);

    stop.abort();
    const stoppedAt = clock.now();
    await pump(clock, 1_000);
    expect(abortedAt).toBeUndefined();
    api.prependReactor({ resource: 'leases' }, () => {
      throw new Error('api down');
    });
    await pump(clock, 12_000);
    // Aborted when the fence closed (at most renewDeadline after the last renewal), far before the 30 s grace.
    expect(abortedAt).toBeLessThanOrEqual(stoppedAt + 10_500);
    await pump(clock, 6_000);
    expect(outcome()).toBe('stopped');
    expect(reasons(harness.events())).toEqual(['Provisioning']);
  });

  it('an operation that ignores its abort signal cannot keep run() from settling after the Lease is lost', async () => {
    const { clock, api, harness, outcome } = await leader({ objects: [storageClass, claim] });
    harness.provisioner.provision = async (options) => {
      harness.provisioner.provisionCalls.push(options);
      return new Promise(() => {});
    };
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);
    api.prependReactor({ resource: 'leases' }, () => {
      throw new Error('api down');
    });
    await pump(clock, 10_000);
    expect(outcome()).toBe('running');
    // The fence closed within renewDeadline; the stuck operation is abandoned 5 s later.
    await pump(clock, 6_000);
    expect(isLeaderElectionLostError(outcome())).toBe(true);
  });
});
