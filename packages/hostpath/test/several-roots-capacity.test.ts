import { resources } from '@kube-provisioner/controller/client';
import { createLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi, storageClassFixture } from '@kube-provisioner/controller/testing';
import { describe, expect, it } from 'vitest';
import { CapacityPublisher, csiStorageCapacities } from '../src/capacity-publisher.ts';
import type { RootCapacity } from '../src/root-capacity.ts';

const provisionerName = 'hostpath.kube-provisioner.io';
const namespace = 'kube-provisioner-hostpath';
const gi = 1024 ** 3;
const context = { signal: new AbortController().signal };

const root = (name: string, capacity: RootCapacity) => ({ name, read: async () => capacity });

/** The published (capacity, maximumVolumeSize) of each class, in GiB. */
async function publishedFor(
  capacity: ConstructorParameters<typeof CapacityPublisher>[0]['capacity'],
): Promise<Record<string, [number, number]>> {
  const api = new FakeKubeApi();
  const ours = (name: string, parameters?: Record<string, string>) =>
    storageClassFixture({ name, provisioner: provisionerName, parameters });
  api.seed(
    resources.storageClasses,
    ours('any'),
    ours('sized', { enforceSize: 'true' }),
    ours('bulk-only', { roots: 'bulk' }),
    ours('elsewhere', { roots: 'ssd' }),
  );
  await new CapacityPublisher({
    capacities: api.resource(csiStorageCapacities),
    classes: api.resource(resources.storageClasses),
    capacity,
    provisionerName,
    nodeName: 'node-a',
    topology: { key: 'kubernetes.io/hostname', value: async () => 'node-a' },
    namespace,
    logger: createLogger({ level: 'silent', write: () => {} }),
  }).publish(context);
  const objects = (await api.resource(csiStorageCapacities).list({ namespace })).items;
  return Object.fromEntries(
    objects.map((object) => [
      object.storageClassName,
      [Number(object.capacity) / gi, Number(object.maximumVolumeSize) / gi],
    ]),
  );
}

describe('capacity of several roots', () => {
  it('publishes the room of the roots a class may use together, and the roomiest as the largest volume', async () => {
    const fast = root('fast', {
      capacityBytes: 10 * gi,
      freeBytes: 6 * gi,
      reservedBytes: 8 * gi,
      volumes: 2,
    });
    const bulk = root('bulk', {
      capacityBytes: 40 * gi,
      freeBytes: 3 * gi,
      reservedBytes: 10 * gi,
      volumes: 5,
    });

    expect(await publishedFor({ roots: [fast, bulk] })).toEqual({
      any: [9, 6],
      sized: [32, 30],
      'bulk-only': [3, 3],
      elsewhere: [0, 0],
    });
  });

  it('counts a root a class names by label', async () => {
    const capacity = (free: number) => ({
      capacityBytes: 10 * gi,
      freeBytes: free,
      reservedBytes: 0,
      volumes: 0,
    });
    const disk = (name: string, free: number, labels?: string[]) => ({
      name,
      labels,
      read: async () => capacity(free),
    });

    const published = await publishedFor({
      roots: [disk('hdd0', 2 * gi, ['bulk']), disk('hdd1', 5 * gi, ['bulk']), disk('nvme0', 9 * gi)],
    });

    expect(published['bulk-only']).toEqual([7, 5]);
    expect(published.any).toEqual([16, 9]);
  });

  it('publishes nothing but a bare root for classes without roots, and no room for those naming some', async () => {
    const only = {
      read: async () => ({ capacityBytes: 10 * gi, freeBytes: 4 * gi, reservedBytes: 0, volumes: 0 }),
    };

    expect(await publishedFor(only)).toEqual({
      any: [4, 4],
      sized: [10, 10],
      'bulk-only': [0, 0],
      elsewhere: [0, 0],
    });
  });
});
