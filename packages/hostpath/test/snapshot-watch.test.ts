import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import { createLogger } from '@kube-provisioner/controller/logging';
import {
  type DirectorySnapshot,
  directorySnapshots,
  needsSync,
  SnapshotTaker,
  watchSnapshots,
} from '@kube-provisioner/controller/snapshot';
import { eventually, FakeKubeApi, statusError } from '@kube-provisioner/controller/testing';
import { snapshotPath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import { hostPathSnapshotStorage } from '../src/snapshot-storage.ts';
import { boundSource } from './clone-fixtures.ts';
import { context, temporaryRoot } from './fixtures.ts';

/** Never within a test: a snapshot acted on came through the watch (or a retry), not a resync. */
const noResync = 60 * 60_000;

async function setUp(root: string, claimReady: () => boolean = () => true) {
  const source = await boundSource(root);
  await writeFile(join(source.dir, 'a.txt'), 'alpha');
  const api = new FakeKubeApi();
  const snapshots = api.resource(directorySnapshots);
  const taker = new SnapshotTaker({
    storage: hostPathSnapshotStorage(new VolumeRoot(root), {
      root,
      node: undefined,
      provisionerName: defaultProvisionerName,
    }),
    provisionerName: defaultProvisionerName,
    snapshots,
    claims: {
      get: async () => {
        if (!claimReady()) throw new ApiError(404, 'not found', { reason: 'NotFound' });
        return source.bound;
      },
    },
    volumes: { get: async () => source.pv },
    resyncIntervalMs: noResync,
    retryBaseMs: 5,
  });
  const term = new AbortController();
  const termContext: OperationContext = { ...context, signal: term.signal };
  const create = () =>
    snapshots.create(
      {
        metadata: { name: 'snap', namespace: 'team-a' },
        spec: { source: { persistentVolumeClaimName: 'src' } },
      },
      { namespace: 'team-a' },
    );
  const read = () => snapshots.get('snap', { namespace: 'team-a' });
  return { api, snapshots, taker, term, termContext, create, read, source };
}

describe('watching DirectorySnapshots', () => {
  it('takes a snapshot created while it watches, with no pass over every snapshot', async () => {
    await using root = await temporaryRoot();
    const { api, taker, term, termContext, create, read } = await setUp(root.path);
    taker.start(termContext);
    await eventually(() => expect(api.activeWatches()).toBe(1));

    const created = await create();

    const ready = await eventually(async () => {
      const snapshot = await read();
      expect(snapshot.status?.readyToUse).toBe(true);
      return snapshot;
    });
    expect(ready.metadata?.uid).toBe(created.metadata?.uid);
    const dataDir = join(root.path, snapshotPath('team-a', created.metadata?.uid ?? ''));
    expect(await readFile(join(dataDir, 'a.txt'), 'utf8')).toBe('alpha');
    // One LIST when the term began; everything else came through the watch.
    expect(api.actions().filter((action) => action.verb === 'list')).toHaveLength(1);
    term.abort();
  });

  it('removes the data of a snapshot as soon as it is deleted', async () => {
    await using root = await temporaryRoot();
    const { api, snapshots, taker, term, termContext, create, read } = await setUp(root.path);
    taker.start(termContext);
    const created = await create();
    await eventually(async () => expect((await read()).status?.readyToUse).toBe(true));
    const dataDir = join(root.path, snapshotPath('team-a', created.metadata?.uid ?? ''));

    await snapshots.delete('snap', { namespace: 'team-a' });

    await eventually(() => expect(api.objects(directorySnapshots)).toEqual([]));
    await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    term.abort();
  });

  it('tries a snapshot whose claim is missing again after a back-off, and takes it once the claim is there', async () => {
    await using root = await temporaryRoot();
    let attempts = 0;
    const { taker, term, termContext, create, read } = await setUp(root.path, () => ++attempts > 3);
    taker.start(termContext);

    await create();

    await eventually(async () => expect((await read()).status?.readyToUse).toBe(true));
    expect(attempts).toBe(4);
    term.abort();
  });

  it('says once that a cluster has no DirectorySnapshot CRD, and takes snapshots once it has', async () => {
    await using root = await temporaryRoot();
    const { api, taker, term, termContext, create, read } = await setUp(root.path);
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const notServed = statusError('NotFound', 'the server could not find the requested resource');
    api.failNext({ verb: 'list', resource: 'directorysnapshots', error: notServed, times: 2 });
    taker.start({ ...termContext, logger });
    await eventually(() => expect(api.activeWatches()).toBe(1), { timeoutMs: 10_000 });

    await create();

    await eventually(async () => expect((await read()).status?.readyToUse).toBe(true));
    expect(lines.filter((line) => line.includes('CRD not installed'))).toHaveLength(1);
    term.abort();
  });

  it('stops watching when its term ends', async () => {
    await using root = await temporaryRoot();
    const { api, snapshots, taker, term, termContext } = await setUp(root.path);
    const watching = watchSnapshots(
      snapshots,
      (snapshot, term) => taker.reconcile(snapshot, term),
      termContext,
    );
    await eventually(() => expect(api.activeWatches()).toBe(1));

    term.abort();

    await watching;
    expect(api.activeWatches()).toBe(0);
  });
});

describe('which updates of a DirectorySnapshot are acted on', () => {
  const before: DirectorySnapshot = {
    metadata: { name: 'snap', namespace: 'team-a', resourceVersion: '5', generation: 1, finalizers: ['a'] },
    spec: { source: { persistentVolumeClaimName: 'src' } },
  };
  const at = (resourceVersion: string, change: Partial<DirectorySnapshot> = {}): DirectorySnapshot => ({
    ...before,
    ...change,
    metadata: { ...before.metadata, ...change.metadata, resourceVersion },
  });

  it('a resync, a change of spec, finalizers, annotations or deletion, but not a status write', () => {
    expect(needsSync(before, at('5'))).toBe(true);
    expect(needsSync(before, at('6', { spec: { deletionPolicy: 'Retain' } }))).toBe(true);
    expect(needsSync(before, at('6', { metadata: { finalizers: [] } }))).toBe(true);
    expect(needsSync(before, at('6', { metadata: { annotations: { a: 'b' } } }))).toBe(true);
    expect(needsSync(before, at('6', { metadata: { deletionTimestamp: new Date(0) } }))).toBe(true);
    expect(
      needsSync(before, at('6', { status: { readyToUse: false, error: { message: 'boom', time: '' } } })),
    ).toBe(false);
  });
});
