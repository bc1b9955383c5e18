import { readdir } from 'node:fs/promises';
import type { Provisioner } from '@kube-provisioner/controller';
import { claimFixture, eventually, Harness, storageClassFixture } from '@kube-provisioner/controller/testing';
import { annSelectedNode } from '@kube-provisioner/controller/wire-names';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { RootSetProvisioner } from '../src/root-set-provisioner.ts';
import { temporaryRoot } from './fixtures.ts';

const gi = 1024 ** 3;

/** A root of 10 GiB with `free` bytes free and nothing reserved. */
const withFree = (free: number) => ({
  space: async () => ({ capacityBytes: 10 * gi, freeBytes: free }),
  read: async () => ({ capacityBytes: 10 * gi, freeBytes: free, reservedBytes: 0, volumes: 0 }),
});

/**
 * Runs a 3Gi claim selected for node-a through the controller with `provisioner`; resolves with the
 * controller's events once the claim has lost its selected node, after checking no PV was made.
 */
async function rescheduled(provisioner: Provisioner): Promise<string[]> {
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
    expect(harness.volumes()).toEqual([]);
    return harness.events();
  } finally {
    await harness.stop();
  }
}

describe('a claim its node cannot hold, through the controller', () => {
  it('loses its selected node, gets an event naming the node and its free space, and no volume', async () => {
    await using root = await temporaryRoot();
    const provisioner = new HostPathProvisioner({
      mode: 'per-node',
      provisionerName: 'example.com/fixture',
      root: root.path,
      nodeName: 'node-a',
      capacity: withFree(gi),
    });
    expect(await rescheduled(provisioner)).toContain(
      `ProvisioningFailed: node node-a has ${gi} bytes free on its root, less than the ${3 * gi} bytes requested: rescheduling the claim`,
    );
    expect(await readdir(root.path)).toEqual([]);
  });

  it('with named roots, none of which can hold it: the event names each root, and no root gets a volume', async () => {
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
    expect(await rescheduled(provisioner)).toContain(
      `ProvisioningFailed: node node-a has no root with ${3 * gi} bytes free for the claim (bytes free per root: fast ${gi}, bulk ${2 * gi}): rescheduling the claim`,
    );
    expect([...(await readdir(fast.path)), ...(await readdir(bulk.path))]).toEqual([]);
  });
});
