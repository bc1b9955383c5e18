import { resources } from '@kube-provisioner/controller/client';
import { createLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi, statusError, storageClassFixture } from '@kube-provisioner/controller/testing';
import type { V1CSIStorageCapacity } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  CapacityPublisher,
  type CapacityPublisherOptions,
  capacityObjectName,
  csiStorageCapacities,
  publishedBytes,
  relistEvery,
} from '../src/capacity-publisher.ts';
import type { RootCapacity } from '../src/root-capacity.ts';

const provisionerName = 'hostpath.kube-provisioner.io';
const namespace = 'kube-provisioner-hostpath';
const gi = 1024 ** 3;
const logger = createLogger({ level: 'silent', write: () => {} });
const context = { signal: new AbortController().signal };

/** A fake API with classes `fast` (plain) and `sized` (enforceSize) of ours and `other` of another provisioner. */
function cluster(): FakeKubeApi {
  const api = new FakeKubeApi();
  api.seed(
    resources.storageClasses,
    storageClassFixture({ name: 'fast', provisioner: provisionerName }),
    storageClassFixture({ name: 'sized', provisioner: provisionerName, parameters: { enforceSize: 'true' } }),
    storageClassFixture({ name: 'other', provisioner: 'example.com/other' }),
  );
  return api;
}

function publisher(
  api: FakeKubeApi,
  capacity: { current: RootCapacity },
  extra: Partial<CapacityPublisherOptions> = {},
): CapacityPublisher {
  return new CapacityPublisher({
    capacities: api.resource(csiStorageCapacities),
    classes: api.resource(resources.storageClasses),
    capacity: { read: async () => capacity.current },
    provisionerName,
    nodeName: 'node-a',
    topology: { key: 'kubernetes.io/hostname', value: async () => 'host-a' },
    namespace,
    owner: { apiVersion: 'v1', kind: 'Pod', name: 'hostpath-provisioner-abcde', uid: 'pod-uid-1' },
    logger,
    ...extra,
  });
}

async function published(api: FakeKubeApi): Promise<V1CSIStorageCapacity[]> {
  return (await api.resource(csiStorageCapacities).list({ namespace })).items;
}

function writes(api: FakeKubeApi): string[] {
  return api
    .actions()
    .filter((action) => ['create', 'update', 'patch', 'delete'].includes(action.verb))
    .map((action) => `${action.verb} ${action.name ?? action.object?.metadata?.name}`);
}

const tenFree: RootCapacity = {
  capacityBytes: 20 * gi,
  freeBytes: 10 * gi,
  reservedBytes: 4 * gi,
  volumes: 3,
};

describe('capacity publisher', () => {
  it('publishes one object per served class for its node: free space, or unreserved space with enforced sizes', async () => {
    const api = cluster();
    await publisher(api, { current: tenFree }).publish(context);
    const objects = await published(api);
    expect(objects.map((object) => object.storageClassName).sort()).toEqual(['fast', 'sized']);
    const byClass = new Map(objects.map((object) => [object.storageClassName, object]));
    expect(byClass.get('fast')).toMatchObject({
      metadata: {
        name: capacityObjectName('node-a', 'fast'),
        ownerReferences: [{ kind: 'Pod', name: 'hostpath-provisioner-abcde', uid: 'pod-uid-1' }],
      },
      nodeTopology: { matchLabels: { 'kubernetes.io/hostname': 'host-a' } },
      capacity: String(10 * gi),
      maximumVolumeSize: String(10 * gi),
    });
    expect(byClass.get('sized')).toMatchObject({
      capacity: String(16 * gi),
      maximumVolumeSize: String(16 * gi),
    });
  });

  it('writes nothing when the numbers are unchanged, even in the canonical form the API server stores', async () => {
    const api = cluster();
    const capacity = { current: tenFree };
    await publisher(api, capacity).publish(context);
    // The API server rewrites 10737418240 as 10Gi.
    const fast = (await published(api)).find((object) => object.storageClassName === 'fast');
    await api
      .resource(csiStorageCapacities)
      .update({ ...fast, capacity: '10Gi', maximumVolumeSize: '10Gi' } as V1CSIStorageCapacity, {
        namespace,
      });
    api.clearActions();
    // A restarted instance: a new publisher finds the objects by name and leaves them.
    await publisher(api, capacity).publish(context);
    expect(writes(api)).toEqual([]);
    capacity.current = { ...tenFree, freeBytes: 3 * gi };
    await publisher(api, capacity).publish(context);
    expect(writes(api)).toEqual([`update ${capacityObjectName('node-a', 'fast')}`]);
    expect(await published(api)).toHaveLength(2);
  });

  it('deletes the object of a class it no longer serves, and leaves other nodes alone', async () => {
    const api = cluster();
    await publisher(api, { current: tenFree }).publish(context);
    await publisher(api, { current: tenFree }, { nodeName: 'node-b' }).publish(context);
    await api.resource(resources.storageClasses).delete('sized');
    api.clearActions();
    await publisher(api, { current: tenFree }).publish(context);
    expect(writes(api)).toEqual([`delete ${capacityObjectName('node-a', 'sized')}`]);
    expect((await published(api)).map((object) => object.metadata?.name).sort()).toEqual(
      [
        capacityObjectName('node-a', 'fast'),
        capacityObjectName('node-b', 'fast'),
        capacityObjectName('node-b', 'sized'),
      ].sort(),
    );
  });

  it('withdraws only its own node’s objects when the instance stops', async () => {
    const api = cluster();
    await publisher(api, { current: tenFree }).publish(context);
    await publisher(api, { current: tenFree }, { nodeName: 'node-b' }).publish(context);
    await publisher(api, { current: tenFree }).withdraw(context);
    expect((await published(api)).map((object) => object.metadata?.name).sort()).toEqual(
      [capacityObjectName('node-b', 'fast'), capacityObjectName('node-b', 'sized')].sort(),
    );
  });

  it('coalesces requests made during a publication into one more', async () => {
    const api = cluster();
    let reads = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const instance = publisher(
      api,
      { current: tenFree },
      {
        capacity: {
          read: async () => {
            reads += 1;
            await gate;
            return tenFree;
          },
        },
      },
    );
    const signal = new AbortController().signal;
    const first = instance.request(signal);
    for (let i = 0; i < 5; i += 1) void instance.request(signal);
    release();
    await first;
    expect(reads).toBe(2);
  });

  it('names objects deterministically, as DNS labels, whatever the node and class names', () => {
    const long = `${'n'.repeat(200)}.example.com`;
    const name = capacityObjectName(long, 'Some.Class');
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/u);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(capacityObjectName(long, 'Some.Class')).toBe(name);
    expect(capacityObjectName(long, 'some-class')).not.toBe(name);
  });

  it('rounds each root’s room down to at most 1 % of its size, so small changes of a busy disk write nothing', async () => {
    const api = cluster();
    const mi = 1024 ** 2;
    // 20 GiB root: steps of 128 MiB (the power of two below 1 %).
    const capacity = { current: { ...tenFree, freeBytes: 10 * gi + 5 * mi } };
    const instance = publisher(api, capacity);
    await instance.publish(context);
    const fast = () =>
      (api.objects(csiStorageCapacities) as V1CSIStorageCapacity[]).find(
        (o) => o.storageClassName === 'fast',
      );
    expect(fast()?.capacity).toBe(String(10 * gi));
    api.clearActions();
    capacity.current = { ...tenFree, freeBytes: 10 * gi + 127 * mi };
    await instance.publish(context);
    expect(writes(api)).toEqual([]);
    capacity.current = { ...tenFree, freeBytes: 10 * gi - 1 };
    await instance.publish(context);
    expect(writes(api)).toEqual([`update ${capacityObjectName('node-a', 'fast')}`]);
    expect(fast()?.capacity).toBe(String(10 * gi - 128 * mi));
    expect(publishedBytes(1000, 10)).toBe(1000);
  });

  it('lists its objects only now and then, and brings back one deleted by someone else at the next list', async () => {
    const api = cluster();
    const instance = publisher(api, { current: tenFree });
    await instance.publish(context);
    await api.resource(csiStorageCapacities).delete(capacityObjectName('node-a', 'fast'), { namespace });
    api.clearActions();
    const lists = () =>
      api.actions().filter((a) => a.verb === 'list' && a.resource === 'csistoragecapacities');
    for (let publication = 1; publication < relistEvery; publication += 1) await instance.publish(context);
    expect(lists()).toEqual([]);
    expect(writes(api)).toEqual([]);
    await instance.publish(context);
    expect(lists()).toHaveLength(1);
    expect(writes(api)).toEqual([`create ${capacityObjectName('node-a', 'fast')}`]);
  });

  it('lists again after a publication that failed half-way', async () => {
    const api = cluster();
    const capacity = { current: tenFree };
    const instance = publisher(api, capacity);
    await instance.publish(context);
    capacity.current = { ...tenFree, freeBytes: 3 * gi };
    api.failNext({
      verb: 'update',
      resource: 'csistoragecapacities',
      error: statusError('Conflict', 'changed'),
    });
    await expect(instance.publish(context)).rejects.toThrow('changed');
    api.clearActions();
    await instance.publish(context);
    expect(
      api.actions().filter((a) => a.verb === 'list' && a.resource === 'csistoragecapacities'),
    ).toHaveLength(1);
    expect(writes(api)).toContain(`update ${capacityObjectName('node-a', 'fast')}`);
  });
});
