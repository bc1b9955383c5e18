import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { LeadershipLapsedError } from '@kube-provisioner/controller/leader-election';
import {
  annSnapshotProvisioner,
  type DirectorySnapshot,
  deletionPolicyOf,
  SnapshotTaker,
  snapshotFinalizer,
  snapshotPathOf,
  snapshotRecordName,
  snapshotSourceAccess,
} from '@kube-provisioner/controller/snapshot';
import { parentMarkerName, snapshotPath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import { hostPathSnapshotStorage } from '../src/snapshot-storage.ts';
import { boundSource } from './clone-fixtures.ts';
import { context, temporaryRoot } from './fixtures.ts';
import { deleting, reconcileEach, snapshotOf, snapshotStore } from './snapshot-fixtures.ts';

async function setUp(root: string, pvChange: (pv: V1PersistentVolume) => V1PersistentVolume = (pv) => pv) {
  const source = await boundSource(root);
  await writeFile(join(source.dir, 'a.txt'), 'alpha');
  const pv = pvChange(source.pv);
  const store = snapshotStore(snapshotOf('src'));
  const taker = new SnapshotTaker({
    storage: hostPathSnapshotStorage(new VolumeRoot(root), {
      root,
      node: undefined,
      provisionerName: defaultProvisionerName,
    }),
    provisionerName: defaultProvisionerName,
    snapshots: store.client,
    claims: { get: async () => source.bound },
    volumes: { get: async () => pv },
    now: () => Date.parse('2026-01-02T03:04:05Z'),
  });
  return { source, store, taker, dataDir: join(root, snapshotPath('team-a', 'snap-uid')) };
}

describe('SnapshotTaker', () => {
  it('claims a snapshot of its own claim, copies the volume into the snapshot area and marks it ready', async () => {
    await using root = await temporaryRoot();
    const { store, taker, dataDir, source } = await setUp(root.path);

    await reconcileEach(taker, store, context);

    const snapshot = store.objects.get('snap');
    expect(snapshot?.metadata?.finalizers).toEqual([snapshotFinalizer]);
    expect(snapshot?.metadata?.annotations?.[annSnapshotProvisioner]).toBe(defaultProvisionerName);
    expect(snapshot?.status).toEqual({
      readyToUse: true,
      restoreSize: source.pv.spec?.capacity?.storage,
      creationTime: '2026-01-02T03:04:05.000Z',
      error: null,
    });
    expect(await readFile(join(dataDir, 'a.txt'), 'utf8')).toBe('alpha');
    const record = await new VolumeRoot(root.path).readRecord(snapshotPath('team-a', 'snap-uid'));
    expect(record).toMatchObject({
      pvName: snapshotRecordName('snap-uid'),
      claimName: 'snap',
      namespace: 'team-a',
    });
  });

  it('leaves a snapshot of another provisioner’s claim, and one another provisioner took, untouched', async () => {
    await using root = await temporaryRoot();
    const foreign = (pv: V1PersistentVolume) => ({
      ...pv,
      metadata: { ...pv.metadata, annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/other' } },
    });
    const { store, taker } = await setUp(root.path, foreign);
    await reconcileEach(taker, store, context);
    expect(store.writes).toEqual([]);

    const other = await setUp(root.path);
    const taken = {
      ...snapshotOf('src'),
      metadata: {
        ...snapshotOf('src').metadata,
        annotations: { [annSnapshotProvisioner]: 'example.com/other' },
      },
    };
    await other.taker.reconcile(taken, context);
    expect(other.store.writes).toEqual([]);
  });

  it('writes nothing once its term has lapsed', async () => {
    await using root = await temporaryRoot();
    const { store, taker, dataDir } = await setUp(root.path);
    const lapsed: OperationContext = {
      ...context,
      assertLeader: () => {
        throw new LeadershipLapsedError('the term ended');
      },
    };

    await expect(reconcileEach(taker, store, lapsed)).rejects.toThrow(LeadershipLapsedError);

    expect(store.writes).toEqual([]);
    await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('after a kill anywhere in the copy, the next term removes the partial copy and snapshots exactly', async () => {
    let leftovers = 0;
    for (const killAt of [12, 20, 30, 45]) {
      await using root = await temporaryRoot();
      const { store, taker, dataDir, source } = await setUp(root.path);
      for (let index = 0; index < 20; index++)
        await writeFile(join(source.dir, `f${index}`), `file ${index}`);
      let writes = 0;
      const killed: OperationContext = {
        ...context,
        assertLeader: () => {
          if (writes++ >= killAt) throw new LeadershipLapsedError('killed');
        },
      };
      await expect(reconcileEach(taker, store, killed)).rejects.toThrow(LeadershipLapsedError);
      expect(store.objects.get('snap')?.status?.readyToUse).toBeUndefined();
      const area = join(dataDir, '..');
      // Like a kill, a lapsed copy may not clean up after itself.
      if ((await readdir(area)).some((name) => name.endsWith('.copy'))) leftovers++;

      await reconcileEach(taker, store, context);

      expect(store.objects.get('snap')?.status?.readyToUse).toBe(true);
      expect(await treeSnapshot(dataDir)).toEqual(await treeSnapshot(source.dir));
      expect((await readdir(area)).filter((name) => name.endsWith('.copy'))).toEqual([]);
    }
    expect(leftovers).toBeGreaterThan(0);
  });

  it('a snapshot deleted after a kill anywhere in its copy leaves no data behind', async () => {
    for (const killAt of [4, 8, 12, 20, 30]) {
      await using root = await temporaryRoot();
      const { store, taker, dataDir, source } = await setUp(root.path);
      for (let index = 0; index < 20; index++)
        await writeFile(join(source.dir, `f${index}`), `file ${index}`);
      let writes = 0;
      const killed: OperationContext = {
        ...context,
        assertLeader: () => {
          if (writes++ >= killAt) throw new LeadershipLapsedError('killed');
        },
      };
      await expect(reconcileEach(taker, store, killed)).rejects.toThrow(LeadershipLapsedError);
      deleting(store);

      await reconcileEach(taker, store, context);

      expect(store.objects.has('snap')).toBe(false);
      // A kill while the area's parents were made may leave one empty, as for any volume: no data.
      const left = await readdir(join(dataDir, '..')).catch(() => []);
      expect(left.filter((name) => name !== parentMarkerName)).toEqual([]);
    }
  });

  it('removes a deleted snapshot’s data, then its finalizer; keeps the data with Retain, recorded as released', async () => {
    for (const policy of [undefined, 'Retain'] as const) {
      await using root = await temporaryRoot();
      const { store, taker, dataDir } = await setUp(root.path);
      await reconcileEach(taker, store, context);
      deleting(store, policy);

      await reconcileEach(taker, store, context);

      expect(store.objects.has('snap')).toBe(false);
      if (policy === 'Retain') {
        expect(await readFile(join(dataDir, 'a.txt'), 'utf8')).toBe('alpha');
        const record = await new VolumeRoot(root.path).readRecord(snapshotPath('team-a', 'snap-uid'));
        expect(record?.releasedAt).toEqual(expect.any(String));
      } else await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });

  it('keeps a deleted snapshot’s data while a restore copies it', async () => {
    await using root = await temporaryRoot();
    const { store, taker, dataDir } = await setUp(root.path);
    await reconcileEach(taker, store, context);
    const restoring = store.objects.get('snap');
    if (restoring?.metadata === undefined) throw new Error('no snapshot');
    restoring.metadata.finalizers = [snapshotFinalizer, finalizerCloningProtection];
    deleting(store);

    await reconcileEach(taker, store, context);

    expect(store.objects.get('snap')?.metadata?.finalizers).toContain(snapshotFinalizer);
    expect(await readFile(join(dataDir, 'a.txt'), 'utf8')).toBe('alpha');
  });

  it('reports a copy that fails in the pass that claims the snapshot', async () => {
    await using root = await temporaryRoot();
    // The source's record names its own PV, not this one: the copy refuses it.
    const renamed = (pv: V1PersistentVolume) => ({ ...pv, metadata: { ...pv.metadata, name: 'pvc-other' } });
    const { store, taker } = await setUp(root.path, renamed);

    await reconcileEach(taker, store, context);

    const snapshot = store.objects.get('snap');
    expect(snapshot?.metadata?.annotations?.[annSnapshotProvisioner]).toBe(defaultProvisionerName);
    expect(snapshot?.status?.readyToUse).toBe(false);
    expect(snapshot?.status?.error?.message).toContain('is not the volume of pvc-other');
  });

  it('reports a source outside its root in the snapshot’s status, once', async () => {
    await using root = await temporaryRoot();
    const outside = (pv: V1PersistentVolume) => ({
      ...pv,
      spec: { ...pv.spec, hostPath: { path: '/elsewhere' } },
    });
    const { store, taker } = await setUp(root.path, outside);

    await reconcileEach(taker, store, context);
    await reconcileEach(taker, store, context);

    const status = store.objects.get('snap')?.status;
    expect(status?.readyToUse).toBe(false);
    expect(status?.error?.message).toContain('is not a directory under');
    expect(store.writes.filter((patch) => (patch as DirectorySnapshot).status !== undefined)).toHaveLength(1);
  });
});

describe('restoring from a snapshot', () => {
  it('makes a claim wait while its snapshot is not ready, saying why', async () => {
    const store = snapshotStore(
      snapshotOf('src', { status: { readyToUse: false, error: { message: 'boom', time: '' } } }),
    );
    const access = snapshotSourceAccess(store.client);

    await expect(access.claims.get('snap', { namespace: 'team-a' })).rejects.toThrow(
      'snapshot team-a/snap is not ready to use yet: boom',
    );
  });

  it('shows a ready snapshot as a Bound claim and a PV of its restore size pointing at its directory', async () => {
    const ready = snapshotOf('src', { status: { readyToUse: true, restoreSize: '2Mi' } });
    ready.metadata = { ...ready.metadata, annotations: { [annSnapshotProvisioner]: defaultProvisionerName } };
    const store = snapshotStore(ready);
    const access = snapshotSourceAccess(store.client);

    const claim = await access.claims.get('snap', { namespace: 'team-a' });
    const pv = await access.volumes.get(claim.spec?.volumeName ?? '');

    expect(claim.status?.phase).toBe('Bound');
    expect(pv.metadata?.name).toBe(snapshotRecordName('snap-uid'));
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(defaultProvisionerName);
    expect(pv.spec?.capacity?.storage).toBe('2Mi');
    expect(snapshotPathOf(pv, snapshotPath)).toBe(snapshotPath('team-a', 'snap-uid'));
  });

  it('protects the snapshot with the cloning-protection finalizer and releases it', async () => {
    const store = snapshotStore(snapshotOf('src', { status: { readyToUse: true } }));
    const access = snapshotSourceAccess(store.client);
    const finalizers = () => store.objects.get('snap')?.metadata?.finalizers;

    await access.claims.patch(
      'snap',
      { metadata: { finalizers: [finalizerCloningProtection] } },
      'strategic',
      { namespace: 'team-a' },
    );
    expect(finalizers()).toEqual([finalizerCloningProtection]);
    const release = { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } };
    await access.claims.patch('snap', release, 'strategic', { namespace: 'team-a' });
    expect(finalizers()).toEqual([]);
  });
});

describe('snapshot names', () => {
  it('records a snapshot as snapshot-<uid> and deletes its data unless the policy is Retain', () => {
    expect(snapshotRecordName('1234')).toBe('snapshot-1234');
    expect(deletionPolicyOf({ spec: { deletionPolicy: 'Retain' } })).toBe('Retain');
    expect(deletionPolicyOf({ spec: {} })).toBe('Delete');
  });
});
