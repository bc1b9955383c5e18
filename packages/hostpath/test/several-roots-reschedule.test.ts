import { readdir } from 'node:fs/promises';
import { claimFixture, eventually, Harness, storageClassFixture } from '@kube-provisioner/controller/testing';
import { annSelectedNode } from '@kube-provisioner/controller/wire-names';
import { describe, expect, it } from 'vitest';
import { RootSetProvisioner } from '../src/root-set-provisioner.ts';
import { temporaryRoot } from './fixtures.ts';

const gi = 1024 ** 3;

const withFree = (free: number) => ({
  space: async () => ({ capacityBytes: 10 * gi, freeBytes: free }),
  read: async () => ({ capacityBytes: 10 * gi, freeBytes: free, reservedBytes: 0, volumes: 0 }),
});

describe('a claim no root of its node can hold, through the controller', () => {
  it('loses its selected node, gets an event naming the node and each root, and no volume', async () => {
    await using fast = await temporaryRoot();
    await using bulk = await temporaryRoot();
    const provisioner = new RootSetProvisioner({
      provisionerName: 'example.com/fixture',
      nodeName: 'node-a',
      roots: [
        { name: 'fast', path: fast.path, capacity: withFree(gi) },
        { name: 'bulk', path: bulk.path, capacity: withFree(2 * gi) },
      ],
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
        `ProvisioningFailed: node node-a has no root with ${3 * gi} bytes free for the claim (bytes free per root: fast ${gi}, bulk ${2 * gi}): rescheduling the claim`,
      );
      expect(harness.volumes()).toEqual([]);
      expect([...(await readdir(fast.path)), ...(await readdir(bulk.path))]).toEqual([]);
    } finally {
      await harness.stop();
    }
  });
});
