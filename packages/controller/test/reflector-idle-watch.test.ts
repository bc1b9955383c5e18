// A watch that stays open but delivers nothing (a half-open or black-holed connection) is taken for
// dead after `watchIdleTimeout` (the reflector passes it to the client as the watch's
// `idleTimeoutMs`) and replaced by a watch from the last resourceVersion; bookmarks
// keep a quiet but live watch open. Driven by the manual clock against the fake API.
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { Reflector, type ReflectorOptions, type ReflectorStore } from '../src/informer/reflector.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { eventually, settle } from '../src/testing/wait.ts';

/** The store as a map of names to resourceVersions. */
class MapStore implements ReflectorStore<V1PersistentVolume> {
  readonly objects = new Map<string, string>();
  replace(items: readonly V1PersistentVolume[]): void {
    this.objects.clear();
    for (const item of items) this.add(item);
  }
  add(obj: V1PersistentVolume): void {
    this.objects.set(obj.metadata?.name ?? '', obj.metadata?.resourceVersion ?? '');
  }
  update(obj: V1PersistentVolume): void {
    this.add(obj);
  }
  delete(obj: V1PersistentVolume): void {
    this.objects.delete(obj.metadata?.name ?? '');
  }
  resync(): void {}
}

const pv = (name: string): V1PersistentVolume => ({ metadata: { name }, spec: {} });

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

function setup(options: ReflectorOptions = {}) {
  const clock = new ManualClock(1_000_000);
  const api = new FakeKubeApi({ clock });
  api.seed(resources.persistentVolumes, pv('a'));
  const store = new MapStore();
  // random 0: every watch asks the server for the shortest timeout, 300 s.
  const reflector = new Reflector(api.resource(resources.persistentVolumes), store, {
    clock,
    random: () => 0,
    ...options,
  });
  const stop = new AbortController();
  stops.push(stop);
  const running = reflector.run(stop.signal);
  const watchCalls = () => api.actions().filter((action) => action.verb === 'watch');
  return { clock, api, store, reflector, running, watchCalls };
}

describe('Reflector watch idle check', () => {
  it('replaces a watch that stays open and silent after 75 s, from the last resourceVersion and without a relist', async () => {
    const { clock, api, store, reflector, watchCalls } = setup();
    await eventually(() => expect(api.activeWatches()).toBe(1));
    api.silenceWatches();
    const listedAt = reflector.lastSyncResourceVersion;
    await api.resource(resources.persistentVolumes).create(pv('b'));

    clock.advance(74_999);
    await settle();
    expect(watchCalls()).toHaveLength(1);
    expect([...store.objects.keys()]).toEqual(['a']);

    clock.advance(1);
    await eventually(() => expect([...store.objects.keys()]).toEqual(['a', 'b']));
    expect(watchCalls().map((call) => call.options?.resourceVersion)).toEqual([listedAt, listedAt]);
    expect(watchCalls()[1]?.options).toMatchObject({ idleTimeoutMs: 75_000 });
    expect(reflector.stats).toMatchObject({ lists: 1, watches: 2, idleWatches: 1 });
  });

  it('keeps a quiet watch that receives a bookmark every minute', async () => {
    const { clock, api, reflector, watchCalls } = setup();
    await eventually(() => expect(api.activeWatches()).toBe(1));
    for (let minute = 0; minute < 4; minute++) {
      clock.advance(60_000);
      api.sendBookmarks();
      await settle();
    }
    // 299 s in all: just short of the 300 s after which the server ends the watch normally.
    clock.advance(59_000);
    await settle();
    expect(watchCalls()).toHaveLength(1);
    expect(reflector.stats).toMatchObject({ watches: 1, idleWatches: 0 });
  });

  it('measures silence from the last event, not from the start of the watch', async () => {
    const { clock, api, reflector } = setup({ watchIdleTimeout: 10_000 });
    await eventually(() => expect(api.activeWatches()).toBe(1));
    clock.advance(9_000);
    await api.resource(resources.persistentVolumes).create(pv('b'));
    await settle();
    clock.advance(9_000);
    await settle();
    expect(reflector.stats).toMatchObject({ watches: 1, idleWatches: 0 });
    clock.advance(1_000);
    await eventually(() => expect(reflector.stats).toMatchObject({ watches: 2, idleWatches: 1 }));
  });

  it('leaves a silent watch to the server-side timeout when the check is off (0)', async () => {
    const { clock, api, reflector, watchCalls } = setup({ watchIdleTimeout: 0 });
    await eventually(() => expect(api.activeWatches()).toBe(1));
    api.silenceWatches();
    expect(watchCalls()[0]?.options).not.toHaveProperty('idleTimeoutMs');
    clock.advance(299_000);
    await settle();
    expect(reflector.stats).toMatchObject({ watches: 1, idleWatches: 0 });
  });
});
