import { EventEmitter } from 'eventemitter3';
import { describe, expect, it } from 'vitest';
import { IgnoredError } from '../src/errors.ts';
import { isLeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { isLeaderElectionLostError } from '../src/leader-election-lost-error.ts';
import type { LeaseLossPolicy } from '../src/process-options.ts';
import { type LifecycleEventMap, lifecycleSink } from '../src/util/lifecycle-emitter.ts';
import { createLogger } from '../src/util/logger.ts';
import {
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
import { type RecordedEvent, recordLifecycle } from './support/lifecycle-recorder.ts';

const names = (seen: readonly RecordedEvent[]): string[] => seen.map((entry) => entry.name);
const storageClass = newStorageClass('class-1', provisionerName);
const claim = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);

/** A controller with leader election on the manual clock, its events recorded from the start. */
function leader(options: HarnessOptions, onLost: LeaseLossPolicy = 'campaign') {
  const manual = manualHarness({ leaderElection: { namespace: 'kube-system', onLost }, ...options });
  const seen = recordLifecycle(manual.harness.controller);
  const stop = new AbortController();
  const done = manual.harness.controller.run(stop.signal).then(
    () => 'stopped',
    (err: unknown) => err,
  );
  return { ...manual, seen, stop, done };
}

describe('lifecycle events: provisioning', () => {
  it('emits leading, synced and provisioned with the claim, the saved PV and the duration', async () => {
    const { clock, harness, seen, stop, done } = leader({ objects: [storageClass, claim] });
    await pump(clock, 2_000);

    expect(names(seen)).toEqual(['leading', 'synced', 'provisioned']);
    expect(seen[0]).toEqual({
      name: 'leading',
      event: { lease: 'kube-system/foo.bar-baz', identity: harness.controller.identity },
    });
    const provisioned = seen[2];
    if (provisioned?.name !== 'provisioned') throw new Error('no provisioned event');
    expect(provisioned.event.pvc.metadata?.uid).toBe('uid-1-1');
    expect(harness.volumes()).toHaveLength(1);
    expect(provisioned.event.pv.metadata?.name).toBe(harness.volumes()[0]?.metadata?.name);
    expect(provisioned.event.pv.spec?.claimRef?.uid).toBe('uid-1-1');
    expect(provisioned.event.durationMs).toBeGreaterThanOrEqual(0);
    expect(provisioned.event.claim).toBe(provisioned.event.pvc);
    expect(provisioned.event.volume).toBe(provisioned.event.pv);
    stop.abort();
    await pump(clock, 1_000);
    expect(await done).toBe('stopped');
  });

  it('emits provisionFailed with the claim, the error and the state', async () => {
    const { clock, harness, seen } = leader({ objects: [storageClass, claim] });
    harness.provisioner.provisionResult = () => ({ error: new Error('backend full'), state: 'Background' });
    await pump(clock, 2_000);

    const failed = seen.find((entry) => entry.name === 'provisionFailed');
    if (failed?.name !== 'provisionFailed') throw new Error('no provisionFailed event');
    expect(failed.event.pvc.metadata?.uid).toBe('uid-1-1');
    expect(failed.event.error.message).toBe('backend full');
    expect(failed.event.state).toBe('Background');
    expect(names(seen)).not.toContain('provisioned');
  });

  it('emits neither provisioned nor provisionFailed for a result that returns after the term lapsed', async () => {
    const { clock, harness, seen, done } = leader({ objects: [storageClass, claim] }, 'reject');
    const provisioned = gate();
    harness.provisioner.provisionResult = async (options) => {
      await provisioned.wait;
      return { pv: volumeFor(options) };
    };
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);

    clock.freeze(20_000);
    provisioned.open();
    await pump(clock, 2_000);

    expect(isLeaderElectionLostError(await done)).toBe(true);
    expect(harness.volumes()).toEqual([]);
    expect(names(seen)).toEqual(['leading', 'synced', 'stoppedLeading']);
    const stopped = seen[2];
    if (stopped?.name !== 'stoppedLeading') throw new Error('no stoppedLeading event');
    expect(stopped.event.reason).toBe('leaseLost');
    expect(isLeadershipLapsedError(stopped.event.error)).toBe(true);
  });
});

describe('lifecycle events: deletion', () => {
  it('emits deleted with the released PV once the asset and the PV object are gone', async () => {
    const { clock, harness, seen } = leader({ objects: [storageClass, releasedVolume()] });
    await pump(clock, 2_000);

    expect(harness.volumes()).toEqual([]);
    const deleted = seen.find((entry) => entry.name === 'deleted');
    if (deleted?.name !== 'deleted') throw new Error('no deleted event');
    expect(deleted.event.pv.metadata?.name).toBe('pv-1');
    expect(deleted.event.durationMs).toBeGreaterThanOrEqual(0);
    expect(deleted.event.volume).toBe(deleted.event.pv);
  });

  it('emits deleteFailed with the PV and the error when delete fails', async () => {
    const { clock, harness, seen } = leader({ objects: [storageClass, releasedVolume()] });
    harness.provisioner.deleteResult = () => {
      throw new Error('share is busy');
    };
    await pump(clock, 2_000);

    const failed = seen.find((entry) => entry.name === 'deleteFailed');
    if (failed?.name !== 'deleteFailed') throw new Error('no deleteFailed event');
    expect(failed.event.pv.metadata?.name).toBe('pv-1');
    expect(failed.event.error.message).toBe('share is busy');
    expect(names(seen)).not.toContain('deleted');
  });

  it('emits nothing for a volume whose delete the provisioner ignores', async () => {
    const { clock, harness, seen } = leader({ objects: [storageClass, releasedVolume()] });
    harness.provisioner.deleteResult = () => {
      throw new IgnoredError('not mine');
    };
    await pump(clock, 2_000);

    expect(harness.volumes()).toHaveLength(1);
    expect(names(seen)).toEqual(['leading', 'synced']);
  });

  it('emits neither deleted nor deleteFailed for a delete that returns after the term lapsed', async () => {
    const { clock, harness, seen, done } = leader(
      {
        objects: [storageClass, releasedVolume()],
      },
      'reject',
    );
    const deleted = gate();
    harness.provisioner.deleteResult = () => deleted.wait;
    await pump(clock, 2_000);
    expect(harness.provisioner.deleteCalls).toHaveLength(1);

    clock.freeze(20_000);
    deleted.open();
    await pump(clock, 2_000);

    expect(isLeaderElectionLostError(await done)).toBe(true);
    expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pv-1']);
    expect(names(seen)).toEqual(['leading', 'synced', 'stoppedLeading']);
  });
});

describe('lifecycle events: leadership', () => {
  it('emits stoppedLeading with reason stopRequested on a graceful stop', async () => {
    const { clock, seen, stop, done } = leader({ objects: [storageClass] });
    await pump(clock, 2_000);
    clock.advance(3_000);
    stop.abort();
    await pump(clock, 1_000);

    expect(await done).toBe('stopped');
    expect(names(seen)).toEqual(['leading', 'synced', 'stoppedLeading']);
    const stopped = seen[2];
    if (stopped?.name !== 'stoppedLeading') throw new Error('no stoppedLeading event');
    expect(stopped.event.reason).toBe('stopRequested');
    expect(stopped.event.error).toBeUndefined();
    expect(stopped.event.ledMs).toBeGreaterThanOrEqual(5_000);
  });

  it('emits synced but no leadership events without leader election', async () => {
    const { clock, harness } = manualHarness({ objects: [storageClass, claim] });
    const seen = recordLifecycle(harness.controller);
    harness.start();
    await pump(clock, 1_000);
    await harness.stop();
    expect(names(seen)).toEqual(['synced', 'provisioned']);
  });
});

describe('lifecycle events: listeners', () => {
  it('logs a listener that throws, and the controller provisions on as if nobody listened', async () => {
    const lines: string[] = [];
    const { clock, harness } = manualHarness({
      objects: [storageClass, claim, newClaim('claim-2', 'uid-2-2', 'class-1', provisionerName)],
      logger: createLogger({ write: (line) => lines.push(line) }),
      threadiness: 1,
    });
    let calls = 0;
    harness.controller.on('provisioned', () => {
      calls++;
      throw new Error('listener bug');
    });
    harness.start();
    await pump(clock, 1_000);
    await harness.stop();

    expect(calls).toBe(2);
    expect(harness.volumes()).toHaveLength(2);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 2, failed: 0 });
    const logged = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.event !== undefined);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({
      level: 'error',
      event: 'provisioned',
      err: expect.objectContaining({ message: 'listener bug' }),
    });
  });

  it('builds a payload only when someone listens', () => {
    const emitter = new EventEmitter<LifecycleEventMap<{ built: number }>>();
    const sink = lifecycleSink(emitter, createLogger({ level: 'silent' }));
    let built = 0;
    sink.emit('built', () => ++built);
    expect(built).toBe(0);
    const received: number[] = [];
    emitter.on('built', (value) => received.push(value));
    sink.emit('built', () => ++built);
    expect(received).toEqual([1]);
  });
});
