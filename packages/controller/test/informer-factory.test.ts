import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  KubeApi,
  KubeObject,
  ResourceClient,
  ResourceDescriptor,
} from '../src/client/resource-client.ts';
import { SharedInformerFactory } from '../src/informer/informer-factory.ts';
import {
  ScriptedResourceClient,
  type TestObject,
  testResource,
  thing,
} from './support/scripted-resource-client.ts';

const otherResource: ResourceDescriptor<TestObject> = { ...testResource, plural: 'others', kind: 'Other' };

/** A KubeApi handing out one scripted client per resource. */
function scriptedApi(): KubeApi & { clients: Map<string, ScriptedResourceClient> } {
  const clients = new Map<string, ScriptedResourceClient>();
  return {
    clients,
    resource<T extends KubeObject>(descriptor: ResourceDescriptor<T>): ResourceClient<T> {
      let client = clients.get(descriptor.plural);
      if (client === undefined) {
        client = new ScriptedResourceClient(testResource);
        clients.set(descriptor.plural, client);
      }
      return client as unknown as ResourceClient<T>;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('SharedInformerFactory', () => {
  it('shares one informer per resource and scope, so several consumers cost one watch', async () => {
    const api = scriptedApi();
    const factory = new SharedInformerFactory(api);
    const first = factory.informerFor(testResource);
    expect(factory.informerFor(testResource)).toBe(first);
    expect(factory.informerFor(testResource, { labelSelector: 'a=b' })).not.toBe(first);
    expect(factory.informerFor(otherResource)).not.toBe(first);

    const seen: string[] = [];
    first.addEventHandler({ onAdd: (o) => void seen.push(`one ${o.metadata.name}`) });
    factory
      .informerFor(testResource)
      .addEventHandler({ onAdd: (o) => void seen.push(`two ${o.metadata.name}`) });

    const things = api.clients.get('things');
    const others = api.clients.get('others');
    things?.answerList({ items: [thing('a', '1')], resourceVersion: '1' });
    things?.answerList({ items: [], resourceVersion: '1' });
    others?.answerList({ items: [], resourceVersion: '1' });
    const controller = new AbortController();
    const running = factory.start(controller.signal);
    const synced = factory.waitForCacheSync(controller.signal);
    await vi.advanceTimersByTimeAsync(100);
    await expect(synced).resolves.toBe(true);
    expect(seen).toEqual(['one a', 'two a']);
    expect(things?.watches.map((w) => w.options.labelSelector)).toEqual([undefined, 'a=b']);
    expect(others?.watches).toHaveLength(1);

    controller.abort();
    await running;
  });

  it('starts only informers not started yet', async () => {
    const api = scriptedApi();
    const factory = new SharedInformerFactory(api);
    factory.informerFor(testResource);
    const controller = new AbortController();
    const first = factory.start(controller.signal);
    factory.informerFor(otherResource);
    const second = factory.start(controller.signal);
    api.clients.get('things')?.answerList({ items: [], resourceVersion: '1' });
    api.clients.get('others')?.answerList({ items: [], resourceVersion: '1' });
    await vi.advanceTimersByTimeAsync(0);
    expect(api.clients.get('things')?.listCalls).toHaveLength(1);
    expect(api.clients.get('others')?.listCalls).toHaveLength(1);
    controller.abort();
    await Promise.all([first, second]);
  });
});
