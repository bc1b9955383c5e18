import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { claim, context, provisioned, provisionOptions, storageClass, temporaryRoot } from './fixtures.ts';

describe('expanding a volume without enforced sizes', () => {
  it('records the new capacity and leaves the directory as it is', async () => {
    await using root = await temporaryRoot();
    const provisioner = new HostPathProvisioner({ mode: 'shared', root: root.path });
    const pvc = claim();
    const pv = provisioned(await provisioner.provision(provisionOptions(pvc), context));

    const result = await provisioner.expand(
      { pv, pvc, storageClass: storageClass(), capacity: '2Gi' },
      context,
    );

    expect(result).toEqual({ capacity: '2Gi' });
  });

  it("is answered in per-node mode only by the volume's own node", async () => {
    await using root = await temporaryRoot();
    const options = { mode: 'per-node', root: root.path } as const;
    const nodeA = new HostPathProvisioner({ ...options, nodeName: 'node-a' });
    const nodeB = new HostPathProvisioner({ ...options, nodeName: 'node-b' });
    const pvc = claim({ node: 'node-a' });
    const pv = provisioned(await nodeA.provision(provisionOptions(pvc), context));
    const expansion = { pv, pvc, storageClass: storageClass(), capacity: '2Gi' };

    expect(nodeB.shouldExpand(pv)).toBe(false);
    expect(nodeA.shouldExpand(pv)).toBe(true);
    expect(await nodeA.expand(expansion, context)).toEqual({ capacity: '2Gi' });
  });
});
