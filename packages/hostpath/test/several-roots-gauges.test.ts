import { metricValue } from '@kube-provisioner/controller/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { gaugedCapacityReader } from '../src/root-capacity-gauges.ts';

const context = { signal: new AbortController().signal };

describe('root capacity gauges of several roots', () => {
  it('share one registry, each root under its own label', async () => {
    const registry = new Registry();
    const reader = (free: number) => ({
      space: async () => ({ capacityBytes: 1000, freeBytes: free }),
      read: async () => ({ capacityBytes: 1000, freeBytes: free, reservedBytes: 0, volumes: 1 }),
    });
    const fast = gaugedCapacityReader(reader(700), registry, '/mnt/fast');
    const bulk = gaugedCapacityReader(reader(300), registry, '/mnt/bulk');
    await fast.read(context);
    await bulk.space();

    const free = (root: string) => metricValue(registry, 'kube_provisioner_root_free_bytes', { root });
    expect(await free('/mnt/fast')).toBe(700);
    expect(await free('/mnt/bulk')).toBe(300);
  });
});
