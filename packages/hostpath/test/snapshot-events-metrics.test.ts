import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  reasonSnapshotFailed,
  reasonSnapshotReady,
  SnapshotTaker,
  snapshotMetricNames,
} from '@kube-provisioner/controller/snapshot';
import { metricValue } from '@kube-provisioner/controller/testing';
import { VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import { hostPathSnapshotStorage } from '../src/snapshot-storage.ts';
import { boundSource } from './clone-fixtures.ts';
import { context, temporaryRoot } from './fixtures.ts';
import { reconcileEach, snapshotOf, snapshotStore } from './snapshot-fixtures.ts';

interface RecordedEvent {
  readonly kind: string | undefined;
  readonly name: string | undefined;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

async function setUp(root: string, pvChange: (pv: V1PersistentVolume) => V1PersistentVolume = (pv) => pv) {
  const source = await boundSource(root);
  await writeFile(join(source.dir, 'a.txt'), 'alpha');
  const store = snapshotStore(snapshotOf('src'));
  const events: RecordedEvent[] = [];
  const registry = new Registry();
  // Each reading of the clock is 1.5 s after the one before.
  let clock = Date.parse('2026-01-02T03:04:05Z');
  const taker = new SnapshotTaker({
    storage: hostPathSnapshotStorage(new VolumeRoot(root), {
      root,
      node: undefined,
      provisionerName: defaultProvisionerName,
    }),
    provisionerName: defaultProvisionerName,
    snapshots: store.client,
    claims: { get: async () => source.bound },
    volumes: { get: async () => pvChange(source.pv) },
    events: {
      event: (object, type, reason, message) =>
        events.push({ kind: object.kind, name: object.metadata?.name, type, reason, message }),
    },
    registry,
    now: () => (clock += 1500),
  });
  const metric = (name: string) => metricValue(registry, name, {});
  return { store, taker, events, registry, metric };
}

describe('snapshot events and metrics', () => {
  it('tells a snapshot taken in a Normal event on it and counts it, its bytes and its duration', async () => {
    await using root = await temporaryRoot();
    const { store, taker, events, registry, metric } = await setUp(root.path);

    await reconcileEach(taker, store, context);

    expect(events).toEqual([
      {
        kind: 'DirectorySnapshot',
        name: 'snap',
        type: 'Normal',
        reason: reasonSnapshotReady,
        message: 'snapshot of claim team-a/src taken: 1 entries, 5 bytes',
      },
    ]);
    expect(await metric(snapshotMetricNames.taken)).toBe(1);
    expect(await metric(snapshotMetricNames.bytes)).toBe(5);
    expect(await metric(snapshotMetricNames.failed)).toBe(0);
    const samples = (await registry.getSingleMetric(snapshotMetricNames.duration)?.get())?.values ?? [];
    const sum = samples.find((sample) => (sample as { metricName?: string }).metricName?.endsWith('_sum'));
    // Two clock readings: the start of the copy and the status written at its end.
    expect(sum?.value).toBe(3);
  });

  it('takes a snapshot once when the watch hands it over again as it was before it was marked ready', async () => {
    await using root = await temporaryRoot();
    const { store, taker, events, metric } = await setUp(root.path);
    await reconcileEach(taker, store, context);
    const ready = store.objects.get('snap');
    if (ready === undefined) throw new Error('no snapshot');
    // The watch's copy of the claimed snapshot, from before the status write.
    const { status: _status, ...stale } = structuredClone(ready);

    expect(await taker.reconcile(stale, context)).toBe('settled');

    expect(events.map((event) => event.reason)).toEqual([reasonSnapshotReady]);
    expect(await metric(snapshotMetricNames.taken)).toBe(1);
  });

  it('tells a failed copy in a Warning event once per message, and counts every failed attempt', async () => {
    await using root = await temporaryRoot();
    const renamed = (pv: V1PersistentVolume) => ({ ...pv, metadata: { ...pv.metadata, name: 'pvc-other' } });
    const { store, taker, events, metric } = await setUp(root.path, renamed);

    await reconcileEach(taker, store, context);
    await reconcileEach(taker, store, context);

    expect(events).toEqual([
      expect.objectContaining({
        kind: 'DirectorySnapshot',
        type: 'Warning',
        reason: reasonSnapshotFailed,
        message: expect.stringContaining('is not the volume of pvc-other'),
      }),
    ]);
    expect(await metric(snapshotMetricNames.failed)).toBe(2);
    expect(await metric(snapshotMetricNames.taken)).toBe(0);
  });
});
