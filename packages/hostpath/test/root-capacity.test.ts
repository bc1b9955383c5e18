import { resources } from '@kube-provisioner/controller/client';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import type { OwnershipRecord, RecordedVolume, RelativeVolumePath } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { annProvisionerIdentity } from '../src/persistent-volume.ts';
import { noRoomReason, RootCapacityReader, roomFor } from '../src/root-capacity.ts';

const gi = 1024 ** 3;
const root = '/srv/hostpath';
const provisionerName = 'hostpath.kube-provisioner.io';
const context = { signal: new AbortController().signal };

function volume(name: string, size: string, node = 'node-a', bound = true): V1PersistentVolume {
  return {
    metadata: {
      name,
      annotations: { [annDynamicallyProvisioned]: provisionerName, [annProvisionerIdentity]: node },
    },
    spec: {
      capacity: { storage: size },
      hostPath: { path: `${root}/${name}` },
      ...(bound ? { claimRef: { name: `claim-${name}`, namespace: 'default', uid: `uid-${name}` } } : {}),
    },
  };
}

function record(pvName: string, extra: Partial<OwnershipRecord> = {}): RecordedVolume {
  return {
    path: pvName as RelativeVolumePath,
    record: {
      claimUid: `uid-${pvName}`,
      namespace: 'default',
      claimName: `claim-${pvName}`,
      pvName,
      provisioner: provisionerName,
      createdAt: '2026-01-01T00:00:00Z',
      ...extra,
    },
  };
}

describe('root capacity', () => {
  it('reserves the capacities of the bound enforced volumes of its node only', async () => {
    const api = new FakeKubeApi();
    api.seed(
      resources.persistentVolumes,
      volume('enforced-1', '2Gi'),
      volume('enforced-2', '3Gi'),
      volume('plain', '5Gi'),
      volume('elsewhere', '7Gi', 'node-b'),
      volume('retained', '11Gi'),
    );
    const records = [
      record('enforced-1', { projectId: 1 }),
      record('enforced-2', { projectId: 2 }),
      record('plain'),
      record('elsewhere', { projectId: 3 }),
      record('retained', { projectId: 4, releasedAt: '2026-01-02T00:00:00Z' }),
    ];
    const reader = new RootCapacityReader(
      { base: root, recordedVolumes: async (wanted = () => true) => records.filter((r) => wanted(r.record)) },
      api.resource(resources.persistentVolumes),
      { mode: 'per-node', provisionerName, root, nodeName: 'node-a' },
      async () => ({ bsize: 4096, blocks: (20 * gi) / 4096, bavail: (9 * gi) / 4096 }),
    );
    expect(await reader.read(context)).toEqual({
      capacityBytes: 20 * gi,
      freeBytes: 9 * gi,
      reservedBytes: 5 * gi,
      volumes: 4,
    });
  });

  it('offers free space to plain classes and unreserved space to enforced ones, never below zero', () => {
    const capacity = { capacityBytes: 20 * gi, freeBytes: 9 * gi, reservedBytes: 5 * gi, volumes: 4 };
    expect(roomFor(capacity, false)).toBe(9 * gi);
    expect(roomFor(capacity, true)).toBe(15 * gi);
    expect(roomFor({ ...capacity, reservedBytes: 30 * gi }, true)).toBe(0);
  });

  it('explains a request that does not fit, naming the node and its room', () => {
    const capacity = { capacityBytes: 20 * gi, freeBytes: 9 * gi };
    expect(noRoomReason(capacity, 'node-a', 9 * gi, false)).toBeUndefined();
    expect(noRoomReason(capacity, 'node-a', 9 * gi + 1, false)).toBe(
      `node node-a has ${9 * gi} bytes free on its root, less than the ${9 * gi + 1} bytes requested: rescheduling the claim`,
    );
    expect(noRoomReason({ ...capacity, reservedBytes: 18 * gi }, 'node-a', 3 * gi, true)).toContain(
      `${2 * gi} bytes unreserved by enforced volumes`,
    );
  });
});
