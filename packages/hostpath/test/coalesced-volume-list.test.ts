import { resources } from '@kube-provisioner/controller/client';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { describe, expect, it } from 'vitest';
import { coalescedVolumeList } from '../src/coalesced-volume-list.ts';
import { RootCapacityReader } from '../src/root-capacity.ts';

const context = { signal: new AbortController().signal };
const scope = (root: string) => ({
  mode: 'per-node' as const,
  provisionerName: 'hostpath.kube-provisioner.io',
  root,
  nodeName: 'node-a',
});
const root = (base: string) => ({ base, recordedVolumes: async () => [] });
const statfs = async () => ({ bsize: 4096, blocks: 100, bavail: 50 });

describe('PV lists of several roots read at once', () => {
  it('are one request, and a later read lists again', async () => {
    const api = new FakeKubeApi();
    const volumes = coalescedVolumeList(api.resource(resources.persistentVolumes));
    const readers = ['/mnt/a', '/mnt/b', '/mnt/c'].map(
      (base) => new RootCapacityReader(root(base), volumes, scope(base), statfs),
    );
    const lists = () => api.actions().filter((action) => action.verb === 'list').length;

    await Promise.all(readers.map((reader) => reader.read(context)));
    expect(lists()).toBe(1);
    await Promise.all(readers.map((reader) => reader.read(context)));
    expect(lists()).toBe(2);
  });

  it('are not shared when options differ or carry a transform', async () => {
    const api = new FakeKubeApi();
    const volumes = coalescedVolumeList(api.resource(resources.persistentVolumes));
    await Promise.all([
      volumes.list({ limit: 1 }),
      volumes.list({ limit: 2 }),
      volumes.list({ limit: 1, transform: (pv) => pv }),
    ]);
    expect(api.actions().filter((action) => action.verb === 'list')).toHaveLength(3);
  });
});
