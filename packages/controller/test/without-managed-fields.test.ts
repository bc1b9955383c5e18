import type { V1ConfigMap, V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ResourceDescriptor, WatchEvent } from '../src/client/resource-client.ts';
import { withoutManagedFields } from '../src/informer/without-managed-fields.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';

const configMaps: ResourceDescriptor<V1ConfigMap> = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
  model: 'V1ConfigMap',
};

const managedFields: V1ManagedFieldsEntry[] = [
  { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { f: 1 } },
];

function configMap(name: string): V1ConfigMap {
  return {
    metadata: { name, namespace: 'default', labels: { app: 'x' }, managedFields },
    data: { key: name },
  };
}

describe('withoutManagedFields', () => {
  it('drops managedFields from listed objects and keeps everything else', async () => {
    const api = new FakeKubeApi();
    api.seed(configMaps, configMap('a'), configMap('b'));
    const list = await withoutManagedFields(api.resource(configMaps)).list({ namespace: 'default' });
    expect(list.items.map((item) => item.metadata)).toEqual([
      expect.not.objectContaining({ managedFields: expect.anything() }),
      expect.not.objectContaining({ managedFields: expect.anything() }),
    ]);
    expect(list.items.map((item) => [item.metadata?.name, item.metadata?.labels, item.data])).toEqual([
      ['a', { app: 'x' }, { key: 'a' }],
      ['b', { app: 'x' }, { key: 'b' }],
    ]);
    expect(list.metadata.resourceVersion).not.toBe('');
  });

  it("drops managedFields from each listed item before the caller's own transform sees it", async () => {
    const api = new FakeKubeApi();
    api.seed(configMaps, configMap('a'));
    const seen: unknown[] = [];
    const list = await withoutManagedFields(api.resource(configMaps)).list({
      namespace: 'default',
      transform: (item) => {
        seen.push(item.metadata);
        return { ...item, data: { transformed: 'yes' } };
      },
    });
    expect(seen).toEqual([expect.not.objectContaining({ managedFields: expect.anything() })]);
    expect(list.items.map((item) => item.data)).toEqual([{ transformed: 'yes' }]);
  });

  it('drops managedFields from watched objects', async () => {
    const api = new FakeKubeApi();
    const client = withoutManagedFields(api.resource(configMaps));
    const stop = new AbortController();
    const events: WatchEvent<V1ConfigMap>[] = [];
    const watching = client.watch(
      { namespace: 'default', resourceVersion: '0', signal: stop.signal },
      (event) => {
        events.push(event);
        stop.abort();
      },
    );
    await api.resource(configMaps).create(configMap('a'));
    await watching;
    expect(events.map((event) => event.type)).toEqual(['ADDED']);
    const object = events[0]?.object as V1ConfigMap;
    expect(object.metadata).not.toHaveProperty('managedFields');
    expect(object.metadata?.name).toBe('a');
  });

  it('leaves single reads and write results whole', async () => {
    const api = new FakeKubeApi();
    const client = withoutManagedFields(api.resource(configMaps));
    const created = await client.create(configMap('a'));
    expect(created.metadata?.managedFields).toEqual(managedFields);
    const read = await client.get('a', { namespace: 'default' });
    expect(read.metadata?.managedFields).toEqual(managedFields);
  });
});
