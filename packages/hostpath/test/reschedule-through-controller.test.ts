import { readdir } from 'node:fs/promises';
import { claimFixture, eventually, Harness, storageClassFixture } from '@kube-provisioner/controller/testing';
import { annSelectedNode } from '@kube-provisioner/controller/wire-names';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { temporaryRoot } from './fixtures.ts';

const gi = 1024 ** 3;

describe('a claim its node cannot hold, through the controller', () => {
  it('loses its selected node, gets an event naming the node and its free space, and no volume', async () => {
    await using root = await temporaryRoot();
    const provisioner = new HostPathProvisioner({
      mode: 'per-node',
      provisionerName: 'example.com/fixture',
      root: root.path,
      nodeName: 'node-a',
      capacity: {
        space: async () => ({ capacityBytes: 10 * gi, freeBytes: gi }),
        read: async () => ({ capacityBytes: 10 * gi, freeBytes: gi, reservedBytes: 0, volumes: 0 }),
      },
    });
    const harness = new Harness({
      provisioner,
      objects: [
        storageClassFixture({ volumeBindingMode: 'WaitForFirstConsumer' }),
        claimFixture({ name: 'big', storage: '3Gi', selectedNode: 'node-a' }),
      ],
    }).start();
    try {
      await eventually(() => {
        const [claim] = harness.claims();
        expect(claim?.metadata?.annotations?.[annSelectedNode]).toBeUndefined();
      });
      expect(harness.events()).toContain(
        `ProvisioningFailed: node node-a has ${gi} bytes free on its root, less than the ${3 * gi} bytes requested: rescheduling the claim`,
      );
      expect(harness.volumes()).toEqual([]);
      expect(await readdir(root.path)).toEqual([]);
    } finally {
      await harness.stop();
    }
  });
});
