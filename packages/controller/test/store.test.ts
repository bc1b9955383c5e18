import { describe, expect, it } from 'vitest';
import { Indexer, indexByNamespace, indexByUid, namespaceIndex, uidIndex } from '../src/informer/store.ts';
import { DeletedFinalStateUnknown } from '../src/informer/tombstone.ts';
import { type TestObject, thing } from './support/scripted-resource-client.ts';

function newIndexer(): Indexer<TestObject> {
  return new Indexer<TestObject>({ [namespaceIndex]: indexByNamespace, [uidIndex]: indexByUid });
}

describe('Indexer', () => {
  it('keys namespaced objects as namespace/name and cluster-scoped ones as name', () => {
    const store = newIndexer();
    store.add(thing('a', '1'));
    store.add({ metadata: { name: 'pv-1', resourceVersion: '1' } });
    expect(store.listKeys().sort()).toEqual(['ns/a', 'pv-1']);
    expect(store.getByKey('pv-1')?.metadata.name).toBe('pv-1');
  });

  it('stores objects by reference, without copying', () => {
    const store = newIndexer();
    const obj = thing('a', '1');
    store.add(obj);
    expect(store.getByKey('ns/a')).toBe(obj);
    expect(store.byIndex(uidIndex, 'uid-a')[0]).toBe(obj);
  });

  it('finds objects by namespace and by uid', () => {
    const store = newIndexer();
    store.add(thing('a', '1'));
    store.add(thing('b', '1', { namespace: 'other' }));
    store.add({ metadata: { name: 'cluster', uid: 'u-c' } });
    expect(store.byIndex(namespaceIndex, 'ns').map((o) => o.metadata.name)).toEqual(['a']);
    expect(store.indexKeys(namespaceIndex, 'other')).toEqual(['other/b']);
    expect(store.byIndex(uidIndex, 'u-c').map((o) => o.metadata.name)).toEqual(['cluster']);
    expect(store.byIndex(uidIndex, 'nope')).toEqual([]);
  });

  it('moves an updated object between index values', () => {
    const store = new Indexer<TestObject>({ phase: (o) => [o.data ?? 'none'] });
    store.add({ ...thing('a', '1'), data: 'Pending' });
    store.update({ ...thing('a', '2'), data: 'Bound' });
    expect(store.indexKeys('phase', 'Pending')).toEqual([]);
    expect(store.indexKeys('phase', 'Bound')).toEqual(['ns/a']);
    expect(store.size).toBe(1);
  });

  it('supports multi-valued custom indexes', () => {
    const store = new Indexer<TestObject>({ labels: (o) => Object.keys(o.metadata.labels ?? {}) });
    store.add(thing('a', '1', { labels: { x: '1', y: '1' } }));
    store.add(thing('b', '1', { labels: { y: '1' } }));
    expect(store.indexKeys('labels', 'y').sort()).toEqual(['ns/a', 'ns/b']);
    expect(store.indexKeys('labels', 'x')).toEqual(['ns/a']);
  });

  it('keeps an index value while any object still has it', () => {
    const store = newIndexer();
    store.add(thing('a', '1'));
    store.add(thing('b', '1'));
    store.add(thing('c', '1'));
    store.delete(thing('a', '2'));
    expect(store.indexKeys(namespaceIndex, 'ns').sort()).toEqual(['ns/b', 'ns/c']);
    store.delete(thing('b', '2'));
    expect(store.byIndex(namespaceIndex, 'ns').map((o) => o.metadata.name)).toEqual(['c']);
    store.add(thing('c', '3'));
    expect(store.indexKeys(namespaceIndex, 'ns')).toEqual(['ns/c']);
    store.delete(thing('c', '4'));
    expect(store.indexKeys(namespaceIndex, 'ns')).toEqual([]);
  });

  it('deletes by object or by tombstone and unindexes', () => {
    const store = newIndexer();
    store.add(thing('a', '1'));
    store.add(thing('b', '1'));
    store.delete(thing('a', '5'));
    store.delete(new DeletedFinalStateUnknown('ns/b', thing('b', '1')));
    store.delete(thing('never-there', '1'));
    expect(store.size).toBe(0);
    expect(store.indexKeys(namespaceIndex, 'ns')).toEqual([]);
    expect(store.indexKeys(uidIndex, 'uid-a')).toEqual([]);
  });

  it('indexes already cached objects when an indexer is added later', () => {
    const store = new Indexer<TestObject>();
    store.add(thing('a', '1'));
    store.addIndexers({ [uidIndex]: indexByUid });
    expect(store.indexKeys(uidIndex, 'uid-a')).toEqual(['ns/a']);
  });

  it('rejects unknown index names and duplicate indexers', () => {
    const store = newIndexer();
    expect(() => store.byIndex('missing', 'x')).toThrow(/index "missing" does not exist/);
    expect(() => store.addIndexers({ [uidIndex]: indexByUid })).toThrow(/already exists/);
  });

  it('rejects objects without a name', () => {
    expect(() => newIndexer().add({ metadata: {} })).toThrow(/no metadata.name/);
  });
});
