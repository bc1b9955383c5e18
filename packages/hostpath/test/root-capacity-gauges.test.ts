import { metricValue } from '@kube-provisioner/controller/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { gaugedCapacityReader } from '../src/root-capacity-gauges.ts';

const root = '/srv/hostpath';
const context = { signal: new AbortController().signal };

describe('root capacity gauges', () => {
  it('publish capacity, free, reserved and volumes of the root at each read, labelled with the root', async () => {
    const registry = new Registry();
    let free = 700;
    const reader = gaugedCapacityReader(
      {
        space: async () => ({ capacityBytes: 1000, freeBytes: free }),
        read: async () => ({ capacityBytes: 1000, freeBytes: free, reservedBytes: 200, volumes: 3 }),
      },
      registry,
      root,
    );
    await reader.read(context);
    const value = (name: string) => metricValue(registry, `kube_provisioner_root_${name}`, { root });
    expect(await value('capacity_bytes')).toBe(1000);
    expect(await value('free_bytes')).toBe(700);
    expect(await value('reserved_bytes')).toBe(200);
    expect(await value('volumes')).toBe(3);
    free = 400;
    await reader.space();
    expect(await value('free_bytes')).toBe(400);
  });
});
