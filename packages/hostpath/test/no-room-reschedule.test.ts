import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import type { RootCapacity } from '../src/root-capacity.ts';
import { claim, context, provisioned, provisionOptions, storageClass, temporaryRoot } from './fixtures.ts';

const gi = 1024 ** 3;

/** A per-node provisioner on `root` whose root reports `capacity`, counting the reads. */
function onRoot(root: string, capacity: RootCapacity) {
  const reads = { space: 0, full: 0, changes: 0 };
  const provisioner = new HostPathProvisioner({
    mode: 'per-node',
    root,
    nodeName: 'node-a',
    capacity: {
      space: async () => {
        reads.space += 1;
        return { capacityBytes: capacity.capacityBytes, freeBytes: capacity.freeBytes };
      },
      read: async () => {
        reads.full += 1;
        return capacity;
      },
    },
    onVolumesChanged: () => {
      reads.changes += 1;
    },
  });
  return { provisioner, reads };
}

describe('a claim its node cannot hold', () => {
  it('is rescheduled with the node and its free space named, and nothing made on the root', async () => {
    await using root = await temporaryRoot();
    const { provisioner, reads } = onRoot(root.path, {
      capacityBytes: 10 * gi,
      freeBytes: 2 * gi,
      reservedBytes: 0,
      volumes: 0,
    });
    const result = await provisioner.provision(
      provisionOptions(claim({ node: 'node-a', storage: '3Gi' })),
      context,
    );
    expect(result).toEqual({
      error: new Error(
        `node node-a has ${2 * gi} bytes free on its root, less than the ${3 * gi} bytes requested: rescheduling the claim`,
      ),
      state: 'Reschedule',
    });
    expect(await readdir(root.path)).toEqual([]);
    // Free space alone needs no list of the volumes placed.
    expect(reads).toEqual({ space: 1, full: 0, changes: 0 });
  });

  it('is measured against the unreserved space when its class enforces sizes', async () => {
    await using root = await temporaryRoot();
    // Plenty free on disk, but enforced volumes were promised 9 of the 10 GiB.
    const { provisioner, reads } = onRoot(root.path, {
      capacityBytes: 10 * gi,
      freeBytes: 8 * gi,
      reservedBytes: 9 * gi,
      volumes: 3,
    });
    const sized = storageClass({ enforceSize: 'true' });
    const result = await provisioner.provision(
      provisionOptions(claim({ node: 'node-a', storage: '2Gi' }), sized),
      context,
    );
    expect(result).toMatchObject({ state: 'Reschedule' });
    expect('error' in result && result.error.message).toContain(`${gi} bytes unreserved by enforced volumes`);
    expect(await readdir(root.path)).toEqual([]);
    expect(reads.full).toBe(1);
  });

  it('is provisioned when it fits exactly, and the change is announced', async () => {
    await using root = await temporaryRoot();
    const { provisioner, reads } = onRoot(root.path, {
      capacityBytes: 10 * gi,
      freeBytes: 3 * gi,
      reservedBytes: 0,
      volumes: 0,
    });
    const options = provisionOptions(claim({ node: 'node-a', storage: '3Gi' }));
    provisioned(await provisioner.provision(options, context));
    expect(await readdir(root.path)).toContain(options.pvName);
    expect(reads.changes).toBe(1);
  });

  it('is finished, not rescheduled, when an earlier attempt already made its directory', async () => {
    await using root = await temporaryRoot();
    const space = { capacityBytes: 10 * gi, freeBytes: 3 * gi, reservedBytes: 0, volumes: 0 };
    const { provisioner } = onRoot(root.path, space);
    const options = provisionOptions(claim({ node: 'node-a', storage: '3Gi' }));
    provisioned(await provisioner.provision(options, context));
    // The disk filled after the directory was made and before the PV was saved: the retry reuses it.
    space.freeBytes = 0;
    provisioned(await provisioner.provision(options, context));
    expect(await readdir(root.path)).toContain(options.pvName);
  });
});
