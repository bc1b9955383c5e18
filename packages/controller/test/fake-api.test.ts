import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { isAlreadyExists, isApiError, isConflict, isGone, isNotFound } from '../src/client/api-error.ts';
import { resources, type WatchEvent } from '../src/client/resource-client.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { failureStatus, statusError } from '../src/testing/status-error.ts';

const start = Date.parse('2024-05-01T10:00:00Z');
let clock: ManualClock;
let api: FakeKubeApi;

beforeEach(() => {
  clock = new ManualClock(start);
  api = new FakeKubeApi({ clock });
});

const pv = (name: string, extra: Partial<V1PersistentVolume['metadata']> = {}): V1PersistentVolume => ({
  metadata: { name, ...extra },
  spec: { capacity: { storage: '1Gi' } },
});
const claim = (name: string, labels: Record<string, string> = {}): V1PersistentVolumeClaim => ({
  metadata: { name, namespace: 'ns1', labels },
  spec: { storageClassName: 'fast' },
});

function collect<T>(events: WatchEvent<T>[]): (event: WatchEvent<T>) => void {
  return (event) => events.push(event);
}

function summary(events: WatchEvent<{ metadata?: { name?: string; resourceVersion?: string } }>[]): string[] {
  return events.map((e) =>
    e.type === 'ERROR' ? `ERROR ${e.object.code}` : `${e.type} ${e.object.metadata?.name ?? ''}`,
  );
}

describe('FakeKubeApi: storage semantics', () => {
  it('assigns uid, creationTimestamp and increasing global resourceVersions on create', async () => {
    const a = await api.resource(resources.persistentVolumes).create(pv('a'));
    const c = await api.resource(resources.persistentVolumeClaims).create(claim('c'));
    expect(a.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata?.creationTimestamp).toEqual(new Date(start));
    expect([a.metadata?.resourceVersion, c.metadata?.resourceVersion]).toEqual(['1', '2']);
    expect(api.resourceVersion).toBe('2');
    expect(a.apiVersion).toBe('v1');
    expect(a.kind).toBe('PersistentVolume');
  });

  it('generates a name from generateName', async () => {
    const created = await api.resource(resources.events).create({
      metadata: { generateName: 'pv-a.', namespace: 'default' },
      involvedObject: { kind: 'PersistentVolume', name: 'pv-a' },
      reason: 'Test',
    });
    expect(created.metadata?.name).toMatch(/^pv-a\.[a-z0-9]{5}$/);
  });

  it('rejects creating an existing object with AlreadyExists', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a'));
    await expect(client.create(pv('a'))).rejects.toSatisfy(isAlreadyExists);
  });

  it('rejects an update with a stale resourceVersion with Conflict, and accepts the current one', async () => {
    const client = api.resource(resources.persistentVolumes);
    const created = await client.create(pv('a'));
    const updated = await client.update({ ...created, spec: { capacity: { storage: '2Gi' } } });
    expect(updated.metadata?.resourceVersion).toBe('2');
    await expect(client.update(created)).rejects.toSatisfy((err) => isConflict(err) && !isAlreadyExists(err));
    await expect(client.update(pv('missing', { resourceVersion: '1' }))).rejects.toSatisfy(isNotFound);
  });

  it('keeps the resourceVersion and emits nothing for an update that changes nothing', async () => {
    const client = api.resource(resources.persistentVolumes);
    const created = await client.create(pv('a'));
    const events: WatchEvent<V1PersistentVolume>[] = [];
    const controller = new AbortController();
    const watching = client.watch({ resourceVersion: '1', signal: controller.signal }, collect(events));
    expect((await client.update(created)).metadata?.resourceVersion).toBe('1');
    await client.update({ ...created, spec: { capacity: { storage: '3Gi' } } });
    await vi.waitFor(() => expect(summary(events)).toEqual(['MODIFIED a']));
    controller.abort();
    await watching;
  });

  it('checks delete preconditions', async () => {
    const client = api.resource(resources.persistentVolumes);
    const created = await client.create(pv('a'));
    await expect(client.delete('a', { preconditions: { uid: 'other' } })).rejects.toSatisfy(isConflict);
    await expect(client.delete('a', { preconditions: { resourceVersion: '0' } })).rejects.toSatisfy(
      isConflict,
    );
    await client.delete('a', { preconditions: { uid: created.metadata?.uid ?? '' } });
    await expect(client.get('a')).rejects.toSatisfy(isNotFound);
    await expect(client.delete('a')).rejects.toSatisfy(isNotFound);
  });

  it('marks an object with finalizers as deleting and removes it with its last finalizer', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a', { finalizers: ['f1', 'f2'] }));
    clock.advance(5000);
    await client.delete('a');
    const deleting = await client.get('a');
    expect(deleting.metadata?.deletionTimestamp).toEqual(new Date(start + 5000));
    await client.patch('a', { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } }, 'strategic');
    expect((await client.get('a')).metadata?.finalizers).toEqual(['f2']);
    await client.patch('a', { metadata: { finalizers: null } }, 'merge');
    await expect(client.get('a')).rejects.toSatisfy(isNotFound);
  });

  it('hands out copies: mutating inputs or results never changes stored objects', async () => {
    const client = api.resource(resources.persistentVolumes);
    const input = pv('a', { annotations: { x: '1' } });
    const created = await client.create(input);
    (input.metadata as { annotations: Record<string, string> }).annotations.x = 'input';
    (created.metadata as { annotations: Record<string, string> }).annotations.x = 'result';
    expect((await client.get('a')).metadata?.annotations).toEqual({ x: '1' });
  });

  it('seeds fixtures keeping their uid and finalizers, without recording actions', () => {
    const [seeded] = api.seed(resources.persistentVolumes, pv('a', { uid: 'fixed', finalizers: ['f'] }));
    expect(seeded?.metadata).toMatchObject({ uid: 'fixed', finalizers: ['f'], resourceVersion: '1' });
    expect(api.objects(resources.persistentVolumes).map((o) => o.metadata?.name)).toEqual(['a']);
    expect(api.actions()).toEqual([]);
  });
});

describe('FakeKubeApi: list', () => {
  beforeEach(() => {
    api.seed(
      resources.persistentVolumeClaims,
      claim('a', { tier: 'gold' }),
      claim('b', { tier: 'silver' }),
      claim('c'),
      { metadata: { name: 'd', namespace: 'ns2', labels: { tier: 'gold' } } },
    );
  });

  it('filters by namespace, label and field selectors', async () => {
    const client = api.resource(resources.persistentVolumeClaims);
    const names = async (options: Parameters<typeof client.list>[0]) =>
      (await client.list(options)).items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
    expect(await names({ namespace: 'ns1' })).toEqual(['ns1/a', 'ns1/b', 'ns1/c']);
    expect(await names({ labelSelector: 'tier=gold' })).toEqual(['ns1/a', 'ns2/d']);
    expect(await names({ labelSelector: 'tier in (gold,silver),tier!=gold' })).toEqual(['ns1/b']);
    expect(await names({ labelSelector: '!tier' })).toEqual(['ns1/c']);
    expect(await names({ fieldSelector: 'metadata.namespace=ns2' })).toEqual(['ns2/d']);
    expect(await names({ fieldSelector: 'metadata.name!=a,spec.storageClassName=fast' })).toEqual([
      'ns1/b',
      'ns1/c',
    ]);
    await expect(client.list({ labelSelector: 'tier in gold' })).rejects.toSatisfy(isApiError);
  });

  it('pages with limit and continue at the list resourceVersion', async () => {
    const client = api.resource(resources.persistentVolumeClaims);
    const first = await client.list({ limit: 3 });
    expect(first.items.map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c']);
    expect(first.metadata.resourceVersion).toBe('4');
    await client.create(claim('e'));
    const second = await client.list({ limit: 3, continue: first.metadata.continue ?? '' });
    // Key order: namespace, then name.
    expect(second.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual([
      'ns1/e',
      'ns2/d',
    ]);
    expect(second.metadata).toEqual({ resourceVersion: '4' });
  });

  it('expires continue tokens older than a compaction', async () => {
    const client = api.resource(resources.persistentVolumeClaims);
    const first = await client.list({ limit: 1 });
    await client.create(claim('e'));
    api.compact();
    await expect(client.list({ limit: 1, continue: first.metadata.continue ?? '' })).rejects.toSatisfy(
      isGone,
    );
  });
});

describe('FakeKubeApi: watch', () => {
  it('starts with synthetic ADDED events without a resourceVersion, then streams changes', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a'));
    const events: WatchEvent<V1PersistentVolume>[] = [];
    const controller = new AbortController();
    const watching = client.watch({ signal: controller.signal }, collect(events));
    await client.create(pv('b'));
    await client.delete('a');
    await vi.waitFor(() => expect(summary(events)).toEqual(['ADDED a', 'ADDED b', 'DELETED a']));
    expect(events[2]?.object.metadata?.resourceVersion).toBe('3');
    expect(api.activeWatches()).toBe(1);
    controller.abort();
    await expect(watching).resolves.toBeUndefined();
    expect(api.activeWatches()).toBe(0);
  });

  it('replays history after the given resourceVersion', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a'));
    await client.create(pv('b'));
    await client.patch('a', { metadata: { labels: { x: 'y' } } }, 'merge');
    const events: WatchEvent<V1PersistentVolume>[] = [];
    const watching = client.watch({ resourceVersion: '1' }, collect(events));
    await vi.waitFor(() => expect(summary(events)).toEqual(['ADDED b', 'MODIFIED a']));
    api.closeWatches();
    await watching;
  });

  it('sends an Expired ERROR event and closes when the resourceVersion was compacted', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a'));
    await client.create(pv('b'));
    api.compact();
    const events: WatchEvent<V1PersistentVolume>[] = [];
    await client.watch({ resourceVersion: '1' }, collect(events));
    expect(events).toMatchObject([{ type: 'ERROR', object: { code: 410, reason: 'Expired' } }]);
  });

  it('expires resourceVersions that fell out of the bounded history', async () => {
    api = new FakeKubeApi({ clock, historyLimit: 2 });
    const client = api.resource(resources.persistentVolumes);
    for (const name of ['a', 'b', 'c', 'd']) await client.create(pv(name));
    const events: WatchEvent<V1PersistentVolume>[] = [];
    await client.watch({ resourceVersion: '1' }, collect(events));
    expect(summary(events)).toEqual(['ERROR 410']);
    const replay: WatchEvent<V1PersistentVolume>[] = [];
    const watching = client.watch({ resourceVersion: '2' }, collect(replay));
    await vi.waitFor(() => expect(summary(replay)).toEqual(['ADDED c', 'ADDED d']));
    api.closeWatches();
    await watching;
  });

  it('turns changes into and out of the selector into ADDED and DELETED', async () => {
    const client = api.resource(resources.persistentVolumeClaims);
    await client.create(claim('a'));
    const events: WatchEvent<V1PersistentVolumeClaim>[] = [];
    const watching = client.watch({ resourceVersion: '1', labelSelector: 'tier=gold' }, collect(events));
    await client.patch('a', { metadata: { labels: { tier: 'gold' } } }, 'merge', { namespace: 'ns1' });
    await client.patch('a', { metadata: { annotations: { n: '1' } } }, 'merge', { namespace: 'ns1' });
    await client.patch('a', { metadata: { labels: { tier: 'silver' } } }, 'merge', { namespace: 'ns1' });
    await vi.waitFor(() => expect(summary(events)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']));
    api.closeWatches();
    await watching;
  });

  it('sends bookmarks to watches that allow them, and ERROR events on request', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('a'));
    const withBookmarks: WatchEvent<V1PersistentVolume>[] = [];
    const without: WatchEvent<V1PersistentVolume>[] = [];
    const a = client.watch({ resourceVersion: '1', allowWatchBookmarks: true }, collect(withBookmarks));
    const b = client.watch({ resourceVersion: '1' }, collect(without));
    api.sendBookmarks();
    api.closeWatches(failureStatus('InternalError', 'etcd down'));
    await Promise.all([a, b]);
    expect(withBookmarks.map((e) => e.type)).toEqual(['BOOKMARK', 'ERROR']);
    expect(withBookmarks[0]?.object.metadata?.resourceVersion).toBe('1');
    expect(without).toMatchObject([{ type: 'ERROR', object: { code: 500 } }]);
  });

  it('ends normally after timeoutSeconds on the injected clock', async () => {
    const watching = api.resource(resources.persistentVolumes).watch({ timeoutSeconds: 60 }, () => {});
    clock.advance(60_000);
    await expect(watching).resolves.toBeUndefined();
  });

  it('rejects with the error thrown by the event handler', async () => {
    api.seed(resources.persistentVolumes, pv('a'));
    const boom = new Error('boom');
    await expect(
      api.resource(resources.persistentVolumes).watch({}, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});

describe('FakeKubeApi: patch', () => {
  beforeEach(() => {
    api.seed(
      resources.persistentVolumes,
      pv('a', { annotations: { keep: '1', drop: '2' }, finalizers: ['f1'] }),
    );
  });

  it('applies merge patches: null deletes, maps merge, lists replace', async () => {
    const patched = await api
      .resource(resources.persistentVolumes)
      .patch('a', { metadata: { annotations: { drop: null, add: '3' }, finalizers: ['f2'] } }, 'merge');
    expect(patched.metadata?.annotations).toEqual({ keep: '1', add: '3' });
    expect(patched.metadata?.finalizers).toEqual(['f2']);
    expect(patched.metadata?.resourceVersion).toBe('2');
  });

  it('applies strategic merge patches: finalizers merge as a set, $deleteFromPrimitiveList removes', async () => {
    const client = api.resource(resources.persistentVolumes);
    const merged = await client.patch('a', { metadata: { finalizers: ['f2', 'f1'] } }, 'strategic');
    expect(merged.metadata?.finalizers).toEqual(['f1', 'f2']);
    const removed = await client.patch(
      'a',
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } },
      'strategic',
    );
    expect(removed.metadata?.finalizers).toEqual(['f2']);
    const replaced = await client.patch(
      'a',
      { metadata: { annotations: { $patch: 'replace', only: 'x' } } },
      'strategic',
    );
    expect(replaced.metadata?.annotations).toEqual({ only: 'x' });
  });

  it('applies JSON patches, failing a test operation with 422', async () => {
    const client = api.resource(resources.persistentVolumes);
    const patched = await client.patch(
      'a',
      [
        { op: 'test', path: '/metadata/finalizers/0', value: 'f1' },
        { op: 'remove', path: '/metadata/finalizers/0' },
        { op: 'add', path: '/metadata/annotations/a~1b', value: 'slash' },
        { op: 'replace', path: '/spec/capacity/storage', value: '5Gi' },
      ],
      'json',
    );
    expect(patched.metadata?.finalizers).toBeUndefined();
    expect(patched.metadata?.annotations).toEqual({ keep: '1', drop: '2', 'a/b': 'slash' });
    expect(patched.spec?.capacity).toEqual({ storage: '5Gi' });
    await expect(
      client.patch('a', [{ op: 'test', path: '/spec/capacity/storage', value: '1Gi' }], 'json'),
    ).rejects.toMatchObject({ statusCode: 422 });
  });

  it('treats a resourceVersion in the patch as a precondition', async () => {
    const client = api.resource(resources.persistentVolumes);
    const stale = { metadata: { resourceVersion: '0', annotations: { x: 'y' } } };
    await expect(client.patch('a', stale, 'merge')).rejects.toSatisfy(isConflict);
    await expect(client.patch('missing', {}, 'merge')).rejects.toSatisfy(isNotFound);
  });
});

describe('FakeKubeApi: reactors and actions', () => {
  it('fails the next matching calls with failNext, then recovers', async () => {
    const client = api.resource(resources.persistentVolumes);
    api.failNext({
      verb: 'create',
      resource: 'persistentvolumes',
      error: statusError('InternalError', 'etcd'),
      times: 2,
    });
    await expect(client.create(pv('a'))).rejects.toMatchObject({ statusCode: 500, message: 'etcd' });
    await expect(client.create(pv('a'))).rejects.toMatchObject({ statusCode: 500 });
    await expect(client.create(pv('a'))).resolves.toMatchObject({ metadata: { name: 'a' } });
  });

  it('lets a reactor answer a call in place of the store, and be removed', async () => {
    const client = api.resource(resources.persistentVolumes);
    const remove = api.prependReactor({ verb: 'get', name: 'ghost' }, () => ({ result: pv('ghost') }));
    await expect(client.get('ghost')).resolves.toMatchObject({ metadata: { name: 'ghost' } });
    remove();
    await expect(client.get('ghost')).rejects.toSatisfy(isNotFound);
  });

  it('runs a list’s transform on every item, whether the store or a reactor answered', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('stored'));
    const transform = (volume: V1PersistentVolume): V1PersistentVolume => ({
      ...volume,
      metadata: { ...volume.metadata, labels: { transformed: 'yes' } },
    });
    const names = async () =>
      (await client.list({ transform })).items.map((item) => [item.metadata?.name, item.metadata?.labels]);
    expect(await names()).toEqual([['stored', { transformed: 'yes' }]]);
    api.prependReactor({ verb: 'list' }, () => ({
      result: { items: [pv('from-reactor')], metadata: { resourceVersion: '1' } },
    }));
    expect(await names()).toEqual([['from-reactor', { transformed: 'yes' }]]);
  });

  it('leaves managedFields out of listed items when asked, as the real client does', async () => {
    const client = api.resource(resources.persistentVolumes);
    await client.create(pv('stored', { managedFields: [{ manager: 'kubectl', operation: 'Update' }] }));
    const [omitted] = (await client.list({ omitManagedFields: true })).items;
    expect(omitted?.metadata).not.toHaveProperty('managedFields');
    const [kept] = (await client.list()).items;
    expect(kept?.metadata?.managedFields).toHaveLength(1);
  });

  it('fails a watch when a failure is injected for it', async () => {
    api.failNext({ verb: 'watch', error: statusError('TooManyRequests', 'slow down', 1) });
    await expect(api.resource(resources.persistentVolumes).watch({}, () => {})).rejects.toMatchObject({
      statusCode: 429,
      retryAfterSeconds: 1,
    });
  });

  it('rejects a call held by an async reactor when its signal aborts', async () => {
    api.prependReactor({ verb: 'get' }, () => new Promise(() => {}));
    const controller = new AbortController();
    const got = api.resource(resources.persistentVolumes).get('a', { signal: controller.signal });
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(got).rejects.toBe(reason);
  });

  it('records every call with copies of what was sent', async () => {
    const client = api.resource(resources.persistentVolumeClaims);
    const sent = claim('c');
    await client.create(sent);
    (sent.metadata as { name: string }).name = 'mutated';
    await client.patch('c', { metadata: { labels: { a: 'b' } } }, 'merge', { namespace: 'ns1' });
    await client.list({ namespace: 'ns1', labelSelector: 'a=b' });
    await client.delete('c', { namespace: 'ns1' }).catch(() => undefined);
    expect(api.actions()).toMatchObject([
      {
        verb: 'create',
        resource: 'persistentvolumeclaims',
        namespace: 'ns1',
        name: 'c',
        object: { metadata: { name: 'c' } },
      },
      { verb: 'patch', name: 'c', patch: { metadata: { labels: { a: 'b' } } }, patchType: 'merge' },
      { verb: 'list', namespace: 'ns1', options: { labelSelector: 'a=b' } },
      { verb: 'delete', name: 'c' },
    ]);
    api.clearActions();
    expect(api.actions()).toEqual([]);
  });
});
