import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isGone } from '../src/client/api-error.ts';
import { Reflector, type ReflectorOptions, type ReflectorStore } from '../src/informer/reflector.ts';
import {
  apiError,
  networkError,
  ScriptedResourceClient,
  type TestObject,
  testResource,
  thing,
} from './support/scripted-resource-client.ts';

/** Records what the reflector writes, in order. */
class RecordingStore implements ReflectorStore<TestObject> {
  readonly ops: string[] = [];
  replace(items: readonly TestObject[]): void {
    this.ops.push(`replace ${items.map((o) => o.metadata.name).join(',')}`);
  }
  add(obj: TestObject): void {
    this.ops.push(`add ${obj.metadata.name}@${obj.metadata.resourceVersion}`);
  }
  update(obj: TestObject): void {
    this.ops.push(`update ${obj.metadata.name}@${obj.metadata.resourceVersion}`);
  }
  delete(obj: TestObject): void {
    this.ops.push(`delete ${obj.metadata.name}@${obj.metadata.resourceVersion}`);
  }
  resync(): void {
    this.ops.push('resync');
  }
}

interface Harness {
  client: ScriptedResourceClient;
  store: RecordingStore;
  reflector: Reflector<TestObject>;
  errors: unknown[];
  stop(): Promise<void>;
}

/** Lets timers due now fire and pending promise chains settle. */
const flush = (): Promise<unknown> => vi.advanceTimersByTimeAsync(0);

function start(options: ReflectorOptions = {}): Harness {
  const client = new ScriptedResourceClient(testResource);
  const store = new RecordingStore();
  const errors: unknown[] = [];
  // random 0: backoff without jitter (800, 1600, … ms) and the shortest watch timeout (300 s).
  const reflector = new Reflector(client, store, {
    random: () => 0,
    onWatchError: (e) => errors.push(e),
    ...options,
  });
  const controller = new AbortController();
  const running = reflector.run(controller.signal);
  return {
    client,
    store,
    reflector,
    errors,
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('Reflector list', () => {
  it('first lists at resourceVersion "0" in pages of 500, following continue tokens without a resourceVersion', async () => {
    const harness = start({ namespace: 'ns', labelSelector: 'app=x', fieldSelector: 'spec.x=y' });
    harness.client
      .answerList({ items: [thing('a', '5')], resourceVersion: '10', continue: 'tok' })
      .answerList({ items: [thing('b', '6')], resourceVersion: '10' });
    const watch = await harness.client.nextWatch();
    const selectors = { namespace: 'ns', labelSelector: 'app=x', fieldSelector: 'spec.x=y' };
    expect(harness.client.listCalls).toEqual([
      { ...selectors, resourceVersion: '0', limit: 500 },
      { ...selectors, continue: 'tok', limit: 500 },
    ]);
    expect(harness.store.ops).toEqual(['replace a,b']);
    expect(watch.options).toEqual({
      ...selectors,
      resourceVersion: '10',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      idleTimeoutMs: 75_000,
    });
    expect(harness.reflector.lastSyncResourceVersion).toBe('10');
    await harness.stop();
  });

  it('draws the server-side watch timeout from [300, 600) seconds', async () => {
    const harness = start({ random: () => 0.999 });
    harness.client.answerList({ items: [], resourceVersion: '1' });
    expect((await harness.client.nextWatch()).options.timeoutSeconds).toBe(599);
    await harness.stop();
  });

  it('falls back to one unpaginated list when a continue token expires', async () => {
    const harness = start();
    harness.client
      .answerList({ items: [thing('a', '1')], resourceVersion: '10', continue: 'tok' })
      .answerList(apiError(410, 'Expired'))
      .answerList({ items: [thing('a', '1'), thing('b', '2')], resourceVersion: '12' });
    const watch = await harness.client.nextWatch();
    expect(harness.client.listCalls[2]).toEqual({ resourceVersion: '0' });
    expect(harness.store.ops).toEqual(['replace a,b']);
    expect(watch.options.resourceVersion).toBe('12');
    await harness.stop();
  });

  it('lists again at once at "" when a relist at the last synced version has expired', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).error({ code: 410, reason: 'Expired', message: 'too old' });
    harness.client
      .answerList(apiError(410, 'Expired'))
      .answerList({ items: [thing('a', '30')], resourceVersion: '30' });
    await vi.advanceTimersByTimeAsync(800);
    const watch = await harness.client.nextWatch();
    expect(harness.client.listCalls.slice(1)).toEqual([
      { resourceVersion: '10' },
      { resourceVersion: '', limit: 500 },
    ]);
    expect(watch.options.resourceVersion).toBe('30');
    await harness.stop();
  });

  it('keeps paging relists at a specific version once the "0" list came back paginated', async () => {
    const harness = start();
    harness.client
      .answerList({ items: [], resourceVersion: '10', continue: 'tok' })
      .answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).error({ code: 410, reason: 'Expired' });
    harness.client.answerList({ items: [], resourceVersion: '20' });
    await vi.advanceTimersByTimeAsync(800);
    await harness.client.nextWatch();
    expect(harness.client.listCalls[2]).toEqual({ resourceVersion: '10', limit: 500 });
    await harness.stop();
  });

  it('treats "Too large resource version" like an expired version', async () => {
    const harness = start();
    const tooLarge = apiError(504, 'Timeout');
    Object.assign(tooLarge, {
      status: { code: 504, reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } },
    });
    harness.client.answerList(tooLarge).answerList({ items: [], resourceVersion: '3' });
    await harness.client.nextWatch();
    expect(harness.client.listCalls.map((c) => c.resourceVersion)).toEqual(['0', '']);
    await harness.stop();
  });
});

describe('Reflector watch', () => {
  it('applies events in order and moves the resourceVersion with every event, bookmarks included', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    const watch = await harness.client.nextWatch();
    watch.added(thing('a', '11')).modified(thing('a', '12')).deleted(thing('a', '13')).bookmark('20');
    expect(harness.store.ops).toEqual(['replace ', 'add a@11', 'update a@12', 'delete a@13']);
    expect(harness.reflector.lastSyncResourceVersion).toBe('20');
    expect(harness.reflector.stats).toEqual({ lists: 1, watches: 1, events: 4, idleWatches: 0 });
    await harness.stop();
  });

  it('watches again from the last version without relisting after a normal close', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    const first = await harness.client.nextWatch();
    first.bookmark('15');
    await vi.advanceTimersByTimeAsync(300_000);
    first.close();
    const second = await harness.client.nextWatch();
    expect(second.options.resourceVersion).toBe('15');
    expect(harness.client.listCalls).toHaveLength(1);
    expect(harness.errors).toEqual([]);
    await harness.stop();
  });

  // The client ends a stream cut mid-way normally; a rejection means the watch could not connect.
  it.each(['ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])(
    'reports a watch that failed to connect with %s, then relists after backoff',
    async (code) => {
      const harness = start();
      harness.client.answerList({ items: [], resourceVersion: '10' });
      const first = await harness.client.nextWatch();
      await vi.advanceTimersByTimeAsync(5000);
      first.fail(networkError(code));
      await flush();
      expect(harness.errors).toMatchObject([{ cause: { code } }]);
      harness.client.answerList({ items: [], resourceVersion: '12' });
      await vi.advanceTimersByTimeAsync(799);
      expect(harness.client.watches).toHaveLength(1);
      expect(harness.client.listCalls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(harness.client.listCalls[1]).toEqual({ resourceVersion: '10' });
      expect((await harness.client.nextWatch()).options.resourceVersion).toBe('12');
      await harness.stop();
    },
  );

  it('relists after backoff when a watch closes within a second without events', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).close();
    await flush();
    expect(harness.errors).toHaveLength(1);
    expect((harness.errors[0] as Error).name).toBe('VeryShortWatchError');
    harness.client.answerList({ items: [], resourceVersion: '11' });
    await vi.advanceTimersByTimeAsync(799);
    expect(harness.client.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(harness.client.listCalls).toEqual([
      { resourceVersion: '0', limit: 500 },
      { resourceVersion: '10' },
    ]);
    await harness.stop();
  });

  it('relists at the last synced version after a 410 ERROR event', async () => {
    const harness = start();
    harness.client.answerList({ items: [thing('a', '5')], resourceVersion: '10' });
    const watch = await harness.client.nextWatch();
    watch
      .modified(thing('a', '11'))
      .error({ code: 410, reason: 'Expired', message: 'too old resource version' });
    expect(watch.open).toBe(false);
    await flush();
    expect(isGone(harness.errors[0])).toBe(true);
    harness.client.answerList({ items: [thing('a', '40')], resourceVersion: '40' });
    await vi.advanceTimersByTimeAsync(800);
    const next = await harness.client.nextWatch();
    expect(harness.client.listCalls[1]).toEqual({ resourceVersion: '11' });
    expect(next.options.resourceVersion).toBe('40');
    expect(harness.store.ops).toEqual(['replace a', 'update a@11', 'replace a']);
    await harness.stop();
  });

  it('relists after a watch request answered 410', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).fail(apiError(410, 'Gone'));
    harness.client.answerList({ items: [], resourceVersion: '50' });
    await vi.advanceTimersByTimeAsync(800);
    expect((await harness.client.nextWatch()).options.resourceVersion).toBe('50');
    expect(harness.client.listCalls).toHaveLength(2);
    await harness.stop();
  });

  it('backs off and watches again without relisting when the connection is refused', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).fail(networkError('ECONNREFUSED'));
    await vi.advanceTimersByTimeAsync(799);
    expect(harness.client.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const second = await harness.client.nextWatch();
    second.fail(networkError('ECONNREFUSED'));
    // The backoff grows while failures keep coming.
    await vi.advanceTimersByTimeAsync(1599);
    expect(harness.client.watches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect((await harness.client.nextWatch()).options.resourceVersion).toBe('10');
    expect(harness.client.listCalls).toHaveLength(1);
    expect(harness.errors).toEqual([]);
    await harness.stop();
  });

  it('reports a watch request refused with 403 and relists after backoff', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).fail(apiError(403, 'Forbidden'));
    await flush();
    expect(harness.errors).toMatchObject([{ statusCode: 403 }]);
    harness.client.answerList({ items: [], resourceVersion: '12' });
    await vi.advanceTimersByTimeAsync(800);
    expect((await harness.client.nextWatch()).options.resourceVersion).toBe('12');
    expect(harness.client.listCalls).toHaveLength(2);
    await harness.stop();
  });

  it('backs off and watches again without relisting on 429', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).error({ code: 429, reason: 'TooManyRequests' });
    await vi.advanceTimersByTimeAsync(800);
    expect((await harness.client.nextWatch()).options.resourceVersion).toBe('10');
    expect(harness.client.listCalls).toHaveLength(1);
    await harness.stop();
  });

  it('reports other errors to the hook, then relists after backoff', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    (await harness.client.nextWatch()).error({ code: 500, reason: 'InternalError', message: 'etcd down' });
    await flush();
    expect(harness.errors).toHaveLength(1);
    expect(harness.errors[0]).toMatchObject({ statusCode: 500, message: 'etcd down' });
    harness.client.answerList({ items: [], resourceVersion: '11' });
    await vi.advanceTimersByTimeAsync(800);
    await harness.client.nextWatch();
    expect(harness.client.listCalls).toHaveLength(2);
    await harness.stop();
  });

  it('retries a failing list with growing backoff, reset after two quiet minutes', async () => {
    const harness = start();
    harness.client.answerList(networkError('ECONNREFUSED'));
    await flush();
    harness.client.answerList(networkError('ECONNREFUSED'));
    await vi.advanceTimersByTimeAsync(800);
    harness.client.answerList({ items: [], resourceVersion: '1' });
    await vi.advanceTimersByTimeAsync(1599);
    expect(harness.client.listCalls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(harness.client.listCalls).toHaveLength(3);
    expect(harness.errors).toHaveLength(2);

    const watch = await harness.client.nextWatch();
    await vi.advanceTimersByTimeAsync(150_000);
    watch.error({ code: 500, reason: 'InternalError' });
    harness.client.answerList({ items: [], resourceVersion: '2' });
    await vi.advanceTimersByTimeAsync(800);
    expect(harness.client.listCalls).toHaveLength(4);
    await harness.stop();
  });

  it('skips objects without a name, leaving the resourceVersion where it was', async () => {
    const harness = start();
    harness.client.answerList({ items: [], resourceVersion: '10' });
    const watch = await harness.client.nextWatch();
    watch.added({ metadata: { resourceVersion: '11' } });
    expect(harness.store.ops).toEqual(['replace ']);
    expect(harness.reflector.lastSyncResourceVersion).toBe('10');
    await harness.stop();
  });
});

describe('Reflector resync and stop', () => {
  it('asks shouldResync every period while watching and resyncs only when it agrees', async () => {
    let agree = false;
    const harness = start({ resyncPeriod: 1000, shouldResync: () => agree });
    harness.client.answerList({ items: [], resourceVersion: '10' });
    await harness.client.nextWatch();
    await vi.advanceTimersByTimeAsync(1000);
    expect(harness.store.ops).toEqual(['replace ']);
    agree = true;
    await vi.advanceTimersByTimeAsync(2000);
    expect(harness.store.ops).toEqual(['replace ', 'resync', 'resync']);
    await harness.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(harness.store.ops).toHaveLength(3);
  });

  it('stops promptly when aborted mid-list, mid-watch or mid-backoff', async () => {
    const midList = start();
    await flush();
    await midList.stop();

    const midWatch = start();
    midWatch.client.answerList({ items: [], resourceVersion: '1' });
    const watch = await midWatch.client.nextWatch();
    await midWatch.stop();
    expect(watch.open).toBe(false);

    const midBackoff = start();
    midBackoff.client.answerList(networkError('ECONNREFUSED'));
    await flush();
    await midBackoff.stop();
    expect(midBackoff.client.listCalls).toHaveLength(1);
    expect(midList.errors.concat(midWatch.errors)).toEqual([]);
  });
});
