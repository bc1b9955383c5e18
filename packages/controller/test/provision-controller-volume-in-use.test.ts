/**
 * `delete` rejecting with a `VolumeInUseError` (Go v13.1.0, external-provisioner #1574): the deletion
 * is postponed, not failed. Twin of Go's `TestDeleteVolumeErrorHandling`, plus the retry it implies.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { IgnoredError, isVolumeInUseError, VolumeInUseError } from '../src/errors.ts';
import type { DeleteFailedEvent } from '../src/lifecycle-events.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import {
  deleteCounts,
  dynamicallyProvisioned,
  eventually,
  type Harness,
  metricValue,
  newVolume,
  processedItems,
  provisionerName,
  useHarnesses,
} from './controller-fixtures.ts';

const { start } = useHarnesses();

const released = (): V1PersistentVolume =>
  newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName));

/** Events about PVs as `type reason message`. */
function volumeEvents(harness: Harness): string[] {
  return harness.api
    .objects(resources.events)
    .filter((event) => event.involvedObject.kind === 'PersistentVolume')
    .map((event) => `${event.type} ${event.reason} ${event.message}`);
}

describe('TestDeleteVolumeErrorHandling', () => {
  const cases: {
    name: string;
    deleteErr: Error;
    expectedEvent: string | undefined;
    expectedCounts: { success: number; failed: number };
  }[] = [
    {
      name: 'generic error emits a warning event and counts as failure',
      deleteErr: new Error('fake error'),
      expectedEvent: 'Warning VolumeFailedDelete fake error',
      expectedCounts: { success: 0, failed: 1 },
    },
    {
      name: 'volume in use emits a normal event and is not counted',
      deleteErr: new VolumeInUseError('volume is still attached to node-1'),
      expectedEvent: 'Normal VolumeDelete volume is still attached to node-1',
      expectedCounts: { success: 0, failed: 0 },
    },
    {
      name: 'ignored error emits no event',
      deleteErr: new IgnoredError('not ours'),
      expectedEvent: undefined,
      expectedCounts: { success: 1, failed: 0 },
    },
  ];
  for (const test of cases) {
    it(test.name, async () => {
      // Never retried within the test: one attempt, then its outcome.
      const harness = start({
        objects: [released()],
        failedDeleteThreshold: 1,
        rateLimiter: () => new ItemExponentialFailureRateLimiter(60_000, 60_000),
      });
      harness.provisioner.deleteResult = () => {
        throw test.deleteErr;
      };
      await eventually(async () =>
        expect(await processedItems(harness.registry, 'volumes')).toBeGreaterThanOrEqual(1),
      );
      expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['volume-1']);
      expect(await deleteCounts(harness.registry, '')).toEqual(test.expectedCounts);
      if (test.expectedEvent === undefined) expect(volumeEvents(harness)).toEqual([]);
      else await eventually(() => expect(volumeEvents(harness)).toEqual([test.expectedEvent]));
    });
  }
});

describe('ProvisionController with a volume still in use', () => {
  it('retries with the usual backoff and deletes the volume once it is free, reporting no failure', async () => {
    const harness = start({
      objects: [released()],
      rateLimiter: () => new ItemExponentialFailureRateLimiter(1, 10),
    });
    const failures: DeleteFailedEvent[] = [];
    harness.controller.on('deleteFailed', (event) => failures.push(event));
    let attempts = 0;
    harness.provisioner.deleteResult = () => {
      attempts++;
      if (attempts < 3)
        throw new VolumeInUseError('persistentvolume volume-1 is still attached to node node-1');
    };
    await eventually(() => expect(harness.volumes()).toEqual([]));
    expect(attempts).toBe(3);
    expect(await deleteCounts(harness.registry, '')).toEqual({ success: 1, failed: 0 });
    expect(await metricValue(harness.registry, 'workqueue_retries_total', { name: 'volumes' })).toBe(2);
    expect(failures).toEqual([]);
    await eventually(() =>
      expect(volumeEvents(harness)).toEqual([
        'Normal VolumeDelete persistentvolume volume-1 is still attached to node node-1',
      ]),
    );
  });

  it('recognises the error by its brand, not its class, and not in a cause chain', () => {
    const error = new VolumeInUseError('attached');
    expect(error.message).toBe('attached');
    expect(error.reason).toBe('attached');
    expect(isVolumeInUseError(error)).toBe(true);
    expect(isVolumeInUseError(Object.assign(new Error('attached'), { name: 'VolumeInUseError' }))).toBe(
      false,
    );
    expect(isVolumeInUseError(new Error('wrapped', { cause: error }))).toBe(false);
  });
});
