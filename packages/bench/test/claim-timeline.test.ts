import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClaimTimeline } from '../src/claim-timeline.ts';

const namespace = 'bench';

function claim(
  uid: string,
  phase?: string,
  ns = namespace,
  annotations: Record<string, string> = {},
): V1PersistentVolumeClaim {
  return {
    metadata: { uid, namespace: ns, name: uid, annotations },
    ...(phase === undefined ? {} : { status: { phase } }),
  };
}

function volume(claimUid: string, ns = namespace): V1PersistentVolume {
  return { metadata: { name: `pvc-${claimUid}` }, spec: { claimRef: { uid: claimUid, namespace: ns } } };
}

describe('ClaimTimeline', () => {
  it('measures claim seen → PV seen per claim', () => {
    const timeline = new ClaimTimeline(namespace);
    timeline.recordClaim('ADDED', claim('a'), 1000);
    timeline.recordClaim('ADDED', claim('b'), 1010);
    timeline.recordVolume('ADDED', volume('b'), 1300);
    timeline.recordVolume('ADDED', volume('a'), 1500);
    expect(timeline.latencies().sort()).toEqual([290, 500]);
    expect(timeline.lastVolumeAdded).toBe(1500);
    expect(timeline.counts).toEqual({
      claimsAdded: 2,
      claimsAnnotated: 0,
      claimsBound: 0,
      volumesAdded: 2,
      volumesDeleted: 0,
    });
  });

  it('keeps the first sighting of each stage and ignores repeats', () => {
    const timeline = new ClaimTimeline(namespace);
    timeline.recordClaim('ADDED', claim('a'), 1000);
    timeline.recordClaim('MODIFIED', claim('a', 'Bound'), 2000);
    timeline.recordClaim('MODIFIED', claim('a', 'Bound'), 3000);
    timeline.recordVolume('ADDED', volume('a'), 1500);
    timeline.recordVolume('MODIFIED', volume('a'), 2500);
    expect(timeline.latencies()).toEqual([500]);
    expect(timeline.lastBound).toBe(2000);
    expect(timeline.counts.claimsBound).toBe(1);
    expect(timeline.counts.volumesAdded).toBe(1);
  });

  it("measures the PV controller's share: claim seen → annotated, and annotated → PV seen", () => {
    const timeline = new ClaimTimeline(namespace);
    timeline.recordClaim('ADDED', claim('a'), 1000);
    timeline.recordClaim('ADDED', claim('b'), 1000);
    timeline.recordClaim(
      'MODIFIED',
      claim('a', undefined, namespace, { 'volume.kubernetes.io/storage-provisioner': 'p' }),
      1200,
    );
    timeline.recordClaim(
      'MODIFIED',
      claim('b', undefined, namespace, { 'volume.beta.kubernetes.io/storage-provisioner': 'p' }),
      1400,
    );
    timeline.recordClaim(
      'MODIFIED',
      claim('a', undefined, namespace, { 'volume.kubernetes.io/storage-provisioner': 'p' }),
      1900,
    );
    timeline.recordVolume('ADDED', volume('a'), 1250);
    timeline.recordVolume('ADDED', volume('b'), 1500);
    expect(timeline.counts.claimsAnnotated).toBe(2);
    expect(timeline.lastAnnotated).toBe(1400);
    expect(timeline.latencies('annotated').sort((x, y) => x - y)).toEqual([50, 100]);
    expect(timeline.latencies().sort()).toEqual([250, 500]);
  });

  it('records PV deletions', () => {
    const timeline = new ClaimTimeline(namespace);
    timeline.recordVolume('ADDED', volume('a'), 1);
    timeline.recordVolume('DELETED', volume('a'), 9);
    expect(timeline.counts.volumesDeleted).toBe(1);
    expect(timeline.lastVolumeDeleted).toBe(9);
  });

  it('ignores claims and PVs of other namespaces, and PVs without a claim', () => {
    const timeline = new ClaimTimeline(namespace);
    timeline.recordClaim('ADDED', claim('x', undefined, 'other'), 1);
    timeline.recordVolume('ADDED', volume('x', 'other'), 2);
    timeline.recordVolume('ADDED', { metadata: { name: 'static' }, spec: {} }, 3);
    expect(timeline.counts).toEqual({
      claimsAdded: 0,
      claimsAnnotated: 0,
      claimsBound: 0,
      volumesAdded: 0,
      volumesDeleted: 0,
    });
  });

  it('resolves a wait once the counts satisfy it', async () => {
    const timeline = new ClaimTimeline(namespace);
    const signal = new AbortController().signal;
    let done = false;
    const waiting = timeline
      .until((counts) => counts.volumesAdded >= 2, signal)
      .then(() => {
        done = true;
      });
    timeline.recordVolume('ADDED', volume('a'), 1);
    await Promise.resolve();
    expect(done).toBe(false);
    timeline.recordVolume('ADDED', volume('b'), 2);
    await waiting;
    expect(done).toBe(true);
  });

  it('rejects a wait when its signal aborts first', async () => {
    const timeline = new ClaimTimeline(namespace);
    const controller = new AbortController();
    const waiting = timeline.until((counts) => counts.volumesAdded >= 1, controller.signal);
    controller.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
  });
});
