import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventHandler } from '../src/informer/event-handler.ts';
import { deletionHandlingMetaNamespaceKey } from '../src/informer/keys.ts';
import { SharedInformer, type SharedInformerOptions } from '../src/informer/shared-informer.ts';
import { indexByUid, namespaceIndex, uidIndex } from '../src/informer/store.ts';
import { isDeletedFinalStateUnknown } from '../src/informer/tombstone.ts';
import { waitForCacheSync } from '../src/informer/wait-for-cache-sync.ts';
import { createLogger } from '../src/util/logger.ts';
import {
  ScriptedResourceClient,
  type ScriptedWatch,
  type TestObject,
  testResource,
  thing,
} from './support/scripted-resource-client.ts';

/** Lets timers due now fire and pending deliveries settle. */
const flush = (): Promise<unknown> => vi.advanceTimersByTimeAsync(0);

/** A handler that records every call as a line of text. */
function recorder(): { events: string[]; handler: EventHandler<TestObject> } {
  const events: string[] = [];
  const rv = (o: TestObject): string => `${o.metadata.name}@${o.metadata.resourceVersion}`;
  return {
    events,
    handler: {
      onAdd: (obj, initial) => void events.push(`add ${rv(obj)}${initial ? ' (initial)' : ''}`),
      onUpdate: (old, obj) => void events.push(`update ${rv(old)} -> ${obj.metadata.resourceVersion}`),
      onDelete: (obj) =>
        void events.push(
          isDeletedFinalStateUnknown(obj)
            ? `delete ${deletionHandlingMetaNamespaceKey(obj)} tombstone of ${rv(obj.obj)}`
            : `delete ${rv(obj)}`,
        ),
    },
  };
}

interface Harness {
  client: ScriptedResourceClient;
  informer: SharedInformer<TestObject>;
  run(): void;
  stop(): Promise<void>;
}

function setup(options: SharedInformerOptions<TestObject> = {}): Harness {
  const client = new ScriptedResourceClient(testResource);
  const informer = new SharedInformer(client, { random: () => 0, ...options });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    client,
    informer,
    run: () => {
      running = informer.run(controller.signal);
    },
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

/** Starts the informer on an initial list and returns the first watch once everything is delivered. */
async function startSynced(
  harness: Harness,
  items: TestObject[],
  resourceVersion = '10',
): Promise<ScriptedWatch<TestObject>> {
  harness.client.answerList({ items, resourceVersion });
  harness.run();
  const watch = await harness.client.nextWatch();
  await flush();
  return watch;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('SharedInformer', () => {
  it('delivers the initial list as initial adds, then watch events, keeping the cache and indexes in step', async () => {
    const harness = setup({ indexers: { [namespaceIndex]: (o) => [o.metadata.namespace ?? ''] } });
    harness.informer.addIndexers({ [uidIndex]: indexByUid });
    const { events, handler } = recorder();
    const registration = harness.informer.addEventHandler(handler);
    expect(harness.informer.hasSynced()).toBe(false);

    const watch = await startSynced(harness, [thing('a', '1'), thing('b', '2')]);
    expect(harness.informer.hasSynced()).toBe(true);
    expect(registration.hasSynced()).toBe(true);

    watch.added(thing('c', '11')).modified(thing('a', '12')).deleted(thing('b', '13'));
    await flush();
    expect(events).toEqual([
      'add a@1 (initial)',
      'add b@2 (initial)',
      'add c@11',
      'update a@1 -> 12',
      'delete b@13',
    ]);
    expect(harness.informer.store.listKeys().sort()).toEqual(['ns/a', 'ns/c']);
    expect(harness.informer.store.byIndex(uidIndex, 'uid-a')[0]?.metadata.resourceVersion).toBe('12');
    expect(harness.informer.store.indexKeys(namespaceIndex, 'ns').sort()).toEqual(['ns/a', 'ns/c']);
    expect(harness.informer.lastSyncResourceVersion).toBe('13');
    await harness.stop();
  });

  it('after a 410 relist, tombstones objects deleted meanwhile and updates changed ones', async () => {
    const harness = setup();
    const { events, handler } = recorder();
    harness.informer.addEventHandler(handler);
    const watch = await startSynced(harness, [thing('same', '1'), thing('changed', '2'), thing('gone', '3')]);
    events.length = 0;

    watch.error({ code: 410, reason: 'Expired' });
    harness.client.answerList({
      items: [thing('same', '1'), thing('changed', '20'), thing('new', '21')],
      resourceVersion: '30',
    });
    await vi.advanceTimersByTimeAsync(800);
    await harness.client.nextWatch();
    await flush();

    expect(events).toEqual(['delete ns/gone tombstone of gone@3', 'update changed@2 -> 20', 'add new@21']);
    expect(harness.informer.store.listKeys().sort()).toEqual(['ns/changed', 'ns/new', 'ns/same']);
    expect(harness.informer.stats.lists).toBe(2);
    await harness.stop();
  });

  it('resyncs each handler on its own period with unchanged objects', async () => {
    const harness = setup({ resyncPeriod: 10_000 });
    const every10 = recorder();
    const every20 = recorder();
    const never = recorder();
    harness.informer.addEventHandler(every10.handler);
    harness.informer.addEventHandler(every20.handler, 20_000);
    harness.informer.addEventHandler(never.handler, 0);
    await startSynced(harness, [thing('a', '1')]);

    await vi.advanceTimersByTimeAsync(10_000);
    expect(every10.events.slice(1)).toEqual(['update a@1 -> 1']);
    expect(every20.events.slice(1)).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(every10.events.slice(1)).toEqual(['update a@1 -> 1', 'update a@1 -> 1']);
    expect(every20.events.slice(1)).toEqual(['update a@1 -> 1']);
    expect(never.events).toEqual(['add a@1 (initial)']);
    await harness.stop();
  });

  it('raises handler periods below 1 s, and lowers the check period for shorter handlers added before start', async () => {
    const harness = setup({ resyncPeriod: 60_000 });
    const fast = recorder();
    harness.informer.addEventHandler(fast.handler, 200);
    await startSynced(harness, [thing('a', '1')]);
    await vi.advanceTimersByTimeAsync(999);
    expect(fast.events).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fast.events).toEqual(['add a@1 (initial)', 'update a@1 -> 1']);

    // Once running, a shorter request is raised to the 1 s check period instead.
    const late = recorder();
    harness.informer.addEventHandler(late.handler, 500);
    await vi.advanceTimersByTimeAsync(1000);
    expect(late.events).toEqual(['add a@1 (initial)', 'update a@1 -> 1']);
    await harness.stop();
  });

  it('gives a handler registered after start an initial add for every cached object', async () => {
    const harness = setup();
    const watch = await startSynced(harness, [thing('a', '1'), thing('b', '2')]);
    const late = recorder();
    const registration = harness.informer.addEventHandler(late.handler);
    expect(registration.hasSynced()).toBe(false);
    await flush();
    expect(registration.hasSynced()).toBe(true);
    watch.added(thing('c', '11'));
    await flush();
    expect(late.events).toEqual(['add a@1 (initial)', 'add b@2 (initial)', 'add c@11']);
    await harness.stop();
  });

  it('keeps delivering to other handlers, and later events, when a handler throws', async () => {
    const logged: string[] = [];
    const harness = setup({ logger: createLogger({ level: 'error', write: (line) => logged.push(line) }) });
    harness.informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
      onUpdate: () => Promise.reject(new Error('async handler bug')),
    });
    const { events, handler } = recorder();
    harness.informer.addEventHandler(handler);
    const watch = await startSynced(harness, [thing('a', '1')]);
    watch.modified(thing('a', '2')).added(thing('b', '3'));
    await flush();
    expect(events).toEqual(['add a@1 (initial)', 'update a@1 -> 2', 'add b@3']);
    expect(logged).toHaveLength(3);
    expect(logged[0]).toContain('handler bug');
    expect(logged[1]).toContain('async handler bug');
    await harness.stop();
  });

  it('awaits an async handler before its next call, in order, without holding up other handlers', async () => {
    const harness = setup();
    const slowCalls: string[] = [];
    const finish = new Map<string, () => void>();
    harness.informer.addEventHandler({
      onAdd: async (obj) => {
        slowCalls.push(`start ${obj.metadata.name}`);
        await new Promise<void>((resolve) => finish.set(obj.metadata.name ?? '', resolve));
        slowCalls.push(`end ${obj.metadata.name}`);
      },
    });
    const fast = recorder();
    harness.informer.addEventHandler(fast.handler);
    const watch = await startSynced(harness, [thing('a', '1')]);
    watch.added(thing('b', '2')).added(thing('c', '3'));
    await flush();
    expect(fast.events).toEqual(['add a@1 (initial)', 'add b@2', 'add c@3']);
    expect(slowCalls).toEqual(['start a']);
    finish.get('a')?.();
    await flush();
    expect(slowCalls).toEqual(['start a', 'end a', 'start b']);
    finish.get('b')?.();
    await flush();
    expect(slowCalls).toEqual(['start a', 'end a', 'start b', 'end b', 'start c']);
    finish.get('c')?.();
    await flush();
    expect(slowCalls).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    await harness.stop();
  });

  it('stops delivering to a removed handler', async () => {
    const harness = setup();
    const { events, handler } = recorder();
    const registration = harness.informer.addEventHandler(handler);
    const watch = await startSynced(harness, [thing('a', '1')]);
    registration.remove();
    watch.added(thing('b', '2'));
    await flush();
    expect(events).toEqual(['add a@1 (initial)']);
    await harness.stop();
  });

  it('runs once, and refuses indexers after start and handlers after stop', async () => {
    const harness = setup();
    await startSynced(harness, []);
    await expect(harness.informer.run(new AbortController().signal)).rejects.toThrow(/only once/);
    expect(() => harness.informer.addIndexers({ [uidIndex]: indexByUid })).toThrow(
      /after the informer has started/,
    );
    await harness.stop();
    expect(() => harness.informer.addEventHandler({})).toThrow(/stopped/);
  });
});

describe('waitForCacheSync', () => {
  it('resolves true once every informer and registration has synced', async () => {
    const harness = setup();
    const registration = harness.informer.addEventHandler({});
    const controller = new AbortController();
    let result: boolean | undefined;
    void waitForCacheSync(controller.signal, harness.informer.hasSynced, registration.hasSynced).then((r) => {
      result = r;
    });
    await vi.advanceTimersByTimeAsync(500);
    expect(result).toBeUndefined();
    await startSynced(harness, [thing('a', '1')]);
    await vi.advanceTimersByTimeAsync(100);
    expect(result).toBe(true);
    await harness.stop();
  });

  it('resolves false when the signal aborts first', async () => {
    const controller = new AbortController();
    const waiting = waitForCacheSync(controller.signal, () => false);
    controller.abort();
    await expect(waiting).resolves.toBe(false);
  });
});
