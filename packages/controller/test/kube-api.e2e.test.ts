// The real KubeApi against a real kube-apiserver: the error model, optimistic concurrency, paging,
// patch types and watch streams the controller machinery relies on.
import type { V1Lease } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict, isNotFound } from '../src/client/api-error.ts';
import { resources, type WatchEvent } from '../src/client/resource-client.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const { env, client } = useE2eCluster();
const leases = client().resource(resources.leases);
let namespace = '';

beforeAll(async () => {
  namespace = await env.namespace('kube-api');
});

const lease = (name: string, holder = 'a'): V1Lease => ({
  metadata: { name, namespace },
  spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
});

describe('KubeApi against kube-apiserver', () => {
  it('creates, reads, updates and deletes, mapping each failure to its ApiError reason', async () => {
    const created = await leases.create(lease('crud'));
    expect(created.metadata?.uid).toMatch(/./);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    await expect(leases.create(lease('crud'))).rejects.toSatisfy(isAlreadyExists);

    const updated = await leases.update({ ...created, spec: { ...created.spec, holderIdentity: 'b' } });
    expect(updated.spec?.holderIdentity).toBe('b');
    // The first object's resourceVersion is stale now: the PUT is an optimistic-concurrency conflict.
    await expect(leases.update(created)).rejects.toSatisfy(isConflict);
    await expect(
      leases.delete('crud', { namespace, preconditions: { uid: 'not-the-uid' } }),
    ).rejects.toSatisfy(isConflict);

    await leases.delete('crud', { namespace });
    await expect(leases.get('crud', { namespace })).rejects.toSatisfy(isNotFound);
    await expect(leases.delete('crud', { namespace })).rejects.toSatisfy(isNotFound);
  });

  it('applies merge, strategic-merge and JSON patches', async () => {
    await leases.create(lease('patched'));
    await leases.patch('patched', { metadata: { labels: { merge: 'yes' } } }, 'merge', { namespace });
    await leases.patch('patched', { metadata: { labels: { strategic: 'yes' } } }, 'strategic', {
      namespace,
    });
    const patched = await leases.patch(
      'patched',
      [{ op: 'replace', path: '/spec/holderIdentity', value: 'json' }],
      'json',
      { namespace },
    );
    expect(patched.metadata?.labels).toEqual({ merge: 'yes', strategic: 'yes' });
    expect(patched.spec?.holderIdentity).toBe('json');
  });

  it('pages a list with limit and continue, all pages at the first page resourceVersion', async () => {
    const names = Array.from({ length: 7 }, (_, i) => `page-${i}`);
    await Promise.all(names.map((name) => leases.create(lease(name))));
    const seen: string[] = [];
    let page = await leases.list({ namespace, limit: 3 });
    // Created after the first page: the continued pages are a snapshot from before it.
    await leases.create(lease('page-late'));
    let pages = 1;
    for (;;) {
      seen.push(...page.items.map((item) => item.metadata?.name ?? ''));
      if (!page.metadata.continue) break;
      page = await leases.list({ namespace, limit: 3, continue: page.metadata.continue });
      pages += 1;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen.filter((name) => name.startsWith('page-')).sort()).toEqual(names);
  });

  it('streams ADDED, MODIFIED and DELETED in order from a resourceVersion, filtered by a field selector', async () => {
    const start = await leases.list({ namespace });
    const events: WatchEvent<V1Lease>[] = [];
    const stop = new AbortController();
    const watching = leases.watch(
      {
        namespace,
        fieldSelector: 'metadata.name=watched',
        resourceVersion: start.metadata.resourceVersion,
        allowWatchBookmarks: true,
        signal: stop.signal,
      },
      (event) => {
        if (event.type !== 'BOOKMARK') events.push(event);
        if (event.type === 'DELETED') stop.abort();
      },
    );
    await leases.create(lease('ignored'));
    const created = await leases.create(lease('watched'));
    await leases.update({ ...created, spec: { ...created.spec, holderIdentity: 'b' } });
    await leases.delete('watched', { namespace });
    await watching;

    expect(events.map((event) => event.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const objects = events.map((event) => event.object as V1Lease);
    expect(objects.map((object) => object.metadata?.name)).toEqual(['watched', 'watched', 'watched']);
    expect(objects[1]?.spec?.holderIdentity).toBe('b');
    expect(objects[0]?.metadata?.creationTimestamp).toBeInstanceOf(Date);
  });
});
