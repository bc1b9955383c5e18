import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  type DirectorySnapshot,
  directorySnapshots,
  type SnapshotStorage,
  SnapshotTaker,
  snapshotFinalizer,
} from '../src/snapshot/index.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { operationContext } from '../src/testing/provision-fixtures.ts';

const provisionerName = 'example.com/dirs';

/** A storage whose paths name where they came from, recording every volume call. */
function recordingStorage() {
  const calls: string[] = [];
  const storage: SnapshotStorage<string> = {
    volumes: {
      async cloneVolume(source, path) {
        calls.push(`clone ${source} -> ${path}`);
        return { entries: 1, bytes: 5, skipped: 0 };
      },
      createVolume: async (path) => calls.push(`create ${path}`),
      removeCloneLeftover: async (path) => calls.push(`leftover ${path}`),
      deleteVolume: async (path) => calls.push(`delete ${path}`),
      releaseVolume: async (path) => calls.push(`release ${path}`),
    },
    sourcePathOf: (pv) => `volume-of-${pv.metadata?.name}`,
    // Beside its source when taken; looked up (asynchronously) when it is not known.
    snapshotPathOf: async (namespace, uid, source) =>
      source === undefined ? `looked-up/${namespace}/${uid}` : `${source}/snap/${namespace}/${uid}`,
  };
  return { calls, storage };
}

describe('SnapshotTaker over a provisioner’s SnapshotStorage', () => {
  it('places a snapshot by its source when taking it, and looks it up when deleting it', async () => {
    const api = new FakeKubeApi();
    const snapshots = api.resource(directorySnapshots);
    const claim: V1PersistentVolumeClaim = {
      metadata: { name: 'src', namespace: 'team-a' },
      spec: { volumeName: 'pv-src' },
      status: { phase: 'Bound' },
    };
    const pv: V1PersistentVolume = {
      metadata: { name: 'pv-src', annotations: { 'pv.kubernetes.io/provisioned-by': provisionerName } },
      spec: { capacity: { storage: '1Gi' } },
    };
    const { calls, storage } = recordingStorage();
    const taker = new SnapshotTaker({
      snapshots,
      claims: { get: async () => claim },
      volumes: { get: async () => pv },
      storage,
      provisionerName,
    });
    const context = operationContext();
    const body: DirectorySnapshot = {
      metadata: { name: 'snap', namespace: 'team-a' },
      spec: { source: { persistentVolumeClaimName: 'src' } },
    };
    const created = await snapshots.create(body, { namespace: 'team-a' });
    const uid = created.metadata?.uid ?? '';

    await expect(taker.reconcile(created, context)).resolves.toBe('settled');
    const taken = await snapshots.get('snap', { namespace: 'team-a' });
    expect(taken.status?.readyToUse).toBe(true);
    expect(taken.metadata?.finalizers).toEqual([snapshotFinalizer]);
    expect(calls).toEqual([`clone volume-of-pv-src -> volume-of-pv-src/snap/team-a/${uid}`]);

    await snapshots.delete('snap', { namespace: 'team-a' });
    const deleting = await snapshots.get('snap', { namespace: 'team-a' });
    await expect(taker.reconcile(deleting, context)).resolves.toBe('settled');

    expect(calls.slice(1)).toEqual([`delete looked-up/team-a/${uid}`]);
    expect(api.objects(directorySnapshots)).toEqual([]);
  });
});
