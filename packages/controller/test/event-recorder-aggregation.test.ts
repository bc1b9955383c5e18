// The recorder against the in-memory API: what ends up stored, not which calls were made.
import type { CoreV1Event } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { createEventRecorder, type EventRecorder } from '../src/events/event-recorder.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';

const claim = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'claim-1', namespace: 'ns', uid: 'uid-1' },
};

let api: FakeKubeApi;
let recorder: EventRecorder;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
  api = new FakeKubeApi();
  recorder = createEventRecorder({
    events: api.resource(resources.events),
    component: 'example.com/hostpath_a',
  });
});
afterEach(() => {
  vi.useRealTimers();
});

const stored = (namespace?: string): CoreV1Event[] => api.objects(resources.events, namespace);

describe('EventRecorder against the API', () => {
  it('stores a repeated event once, with its count and last timestamp raised', async () => {
    for (let i = 0; i < 5; i++) {
      recorder.event(claim, 'Warning', 'ProvisioningFailed', 'no space left');
      await vi.advanceTimersByTimeAsync(1_000);
    }
    await recorder.flush();
    const events = stored('ns');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ count: 5, message: 'no space left', reason: 'ProvisioningFailed' });
    expect(events[0]?.lastTimestamp?.getTime()).toBe(Date.UTC(2025, 0, 1, 0, 0, 4));
    expect(events[0]?.firstTimestamp?.getTime()).toBe(Date.UTC(2025, 0, 1));
  });

  it('folds many similar messages into one aggregate event instead of piling them up', async () => {
    // 20 stays within the spam filter's burst of 25 per object.
    for (let i = 1; i <= 20; i++) {
      recorder.event(claim, 'Warning', 'ProvisioningFailed', `attempt ${i} failed`);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    await recorder.flush();
    const events = stored('ns');
    expect(events).toHaveLength(10);
    const aggregate = events.find((e) => e.message?.startsWith('(combined from similar events): '));
    expect(aggregate?.count).toBe(11);
    expect(aggregate?.message).toBe('(combined from similar events): attempt 20 failed');
  });

  it('stores events about a PersistentVolume in "default"', async () => {
    const volume = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-1', uid: 'uid-2' } };
    recorder.event(volume, 'Warning', 'VolumeFailedDelete', 'boom');
    await recorder.flush();
    expect(stored('default').map((e) => e.involvedObject.name)).toEqual(['pvc-1']);
  });
});
