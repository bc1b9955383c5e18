import { describe, expect, it } from 'vitest';
import { type Delta, RealFifo } from '../src/informer/real-fifo.ts';
import { Indexer } from '../src/informer/store.ts';
import { isDeletedFinalStateUnknown } from '../src/informer/tombstone.ts';
import { type TestObject, thing } from './support/scripted-resource-client.ts';

interface Popped {
  type: Delta<TestObject>['type'];
  key: string;
  rv: string | undefined;
  tombstone: boolean;
  initial: boolean;
}

/** Takes everything queued, recording what came out. */
async function drain(fifo: RealFifo<TestObject>): Promise<Popped[]> {
  const out: Popped[] = [];
  while (fifo.length > 0) {
    await fifo.drain((delta, initial) => {
      const tombstone = isDeletedFinalStateUnknown(delta.object);
      const obj = isDeletedFinalStateUnknown(delta.object) ? delta.object.obj : delta.object;
      out.push({ type: delta.type, key: delta.key, rv: obj.metadata.resourceVersion, tombstone, initial });
    });
  }
  return out;
}

function setup(cached: TestObject[] = []): { fifo: RealFifo<TestObject>; known: Indexer<TestObject> } {
  const known = new Indexer<TestObject>();
  for (const obj of cached) known.add(obj);
  return { fifo: new RealFifo(known), known };
}

describe('RealFifo', () => {
  it('delivers every delta in arrival order without merging deltas of one key', async () => {
    const { fifo } = setup();
    fifo.add(thing('a', '1'));
    fifo.update(thing('a', '2'));
    fifo.add(thing('b', '3'));
    fifo.delete(thing('a', '4'));
    fifo.update(thing('a', '5'));
    const popped = await drain(fifo);
    expect(popped.map((p) => `${p.type} ${p.key}@${p.rv}`)).toEqual([
      'Added ns/a@1',
      'Updated ns/a@2',
      'Added ns/b@3',
      'Deleted ns/a@4',
      'Updated ns/a@5',
    ]);
  });

  it('replace queues tombstones for cached keys missing from the list, then the listed items', async () => {
    const { fifo } = setup([thing('gone', '1'), thing('kept', '1')]);
    fifo.replace([thing('kept', '2'), thing('new', '3')]);
    const popped = await drain(fifo);
    expect(popped.map((p) => `${p.type} ${p.key}@${p.rv}${p.tombstone ? ' tombstone' : ''}`)).toEqual([
      'Deleted ns/gone@1 tombstone',
      'Replaced ns/kept@2',
      'Replaced ns/new@3',
    ]);
  });

  it('replace tombstones a queued key with its last queued state', async () => {
    const { fifo } = setup([thing('a', '1')]);
    fifo.update(thing('a', '2'));
    fifo.add(thing('queued-only', '3'));
    fifo.replace([]);
    const popped = await drain(fifo);
    expect(popped.filter((p) => p.tombstone).map((p) => `${p.key}@${p.rv}`)).toEqual([
      'ns/a@2',
      'ns/queued-only@3',
    ]);
  });

  it('replace adds no second tombstone when the last queued delta already deletes the key', async () => {
    const { fifo } = setup([thing('a', '1')]);
    fifo.delete(thing('a', '2'));
    fifo.replace([]);
    const popped = await drain(fifo);
    expect(popped.map((p) => `${p.type} ${p.key} ${p.tombstone}`)).toEqual(['Deleted ns/a false']);
  });

  it('resync queues a Sync delta only for cached keys with nothing queued', async () => {
    const { fifo } = setup([thing('a', '1'), thing('b', '1')]);
    fifo.update(thing('b', '2'));
    fifo.resync();
    const popped = await drain(fifo);
    expect(popped.map((p) => `${p.type} ${p.key}@${p.rv}`)).toEqual(['Updated ns/b@2', 'Sync ns/a@1']);
  });

  it('has synced once every delta of the first replace is processed, flagging them as initial', async () => {
    const { fifo } = setup();
    expect(fifo.hasSynced()).toBe(false);
    fifo.replace([thing('a', '1'), thing('b', '1')]);
    expect(fifo.hasSynced()).toBe(false);
    fifo.add(thing('c', '2'));
    const popped = await drain(fifo);
    expect(popped.map((p) => p.initial)).toEqual([true, true, false]);
    expect(fifo.hasSynced()).toBe(true);
  });

  it('counts changes queued before the first replace as part of the initial population', async () => {
    const { fifo } = setup();
    fifo.add(thing('early', '1'));
    expect(fifo.hasSynced()).toBe(true);
    const { fifo: other } = setup();
    other.replace([]);
    expect(other.hasSynced()).toBe(true);
  });

  it('counts a delta as taken when processing throws, and keeps the rest queued', async () => {
    const { fifo } = setup();
    fifo.replace([thing('a', '1'), thing('b', '1')]);
    await expect(
      fifo.drain(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(fifo.length).toBe(1);
    expect(fifo.hasSynced()).toBe(false);
    expect((await drain(fifo)).map((p) => p.key)).toEqual(['ns/b']);
    expect(fifo.hasSynced()).toBe(true);
  });

  it('processes deltas queued while draining in the same round', async () => {
    const { fifo } = setup();
    const seen: string[] = [];
    fifo.add(thing('a', '1'));
    await fifo.drain((delta) => {
      seen.push(delta.key);
      if (delta.key === 'ns/a') fifo.add(thing('b', '2'));
    });
    expect(seen).toEqual(['ns/a', 'ns/b']);
  });

  it('wakes a waiting drain when a delta arrives and ends drains once closed', async () => {
    const { fifo } = setup();
    const seen: string[] = [];
    const waiting = fifo.drain((delta) => seen.push(delta.key));
    fifo.add(thing('a', '1'));
    await expect(waiting).resolves.toBe(true);
    expect(seen).toEqual(['ns/a']);
    const blocked = fifo.drain(() => seen.push('unexpected'));
    fifo.close();
    await expect(blocked).resolves.toBe(false);
    fifo.add(thing('b', '1'));
    await expect(fifo.drain(() => seen.push('unexpected'))).resolves.toBe(false);
    expect(seen).toEqual(['ns/a']);
  });
});
