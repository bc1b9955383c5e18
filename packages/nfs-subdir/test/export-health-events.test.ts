import type { KubeObject } from '@kube-provisioner/controller/client';
import { describe, expect, it } from 'vitest';
import { ownPod, reasonExportAvailable, reasonExportUnavailable } from '../src/export-health-events.ts';
import { claim, context, provisioned, provisionOptions } from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nfs-0', namespace: 'storage' } };

describe('events when an export goes down and comes back', () => {
  it('records one Warning on the Pod when an export leaves placement and one Normal when it is back', async () => {
    const recorded: { object: KubeObject; type: string; reason: string; message: string }[] = [];
    const events = {
      event: (object: KubeObject, type: string, reason: string, message: string) => {
        recorded.push({ object, type, reason, message });
      },
    };
    const free: Record<string, number> = { a: 1 * gi };
    const { dir, provisioner } = await twoExports(free, { events, pod });
    await using _ = dir;

    // Two placements and a maintenance run see b down: one event.
    for (const name of ['one', 'two']) {
      provisioned(await provisioner.provision(provisionOptions(claim({ name })), context));
    }
    await provisioner.maintain(context);
    free.b = 2 * gi;
    await provisioner.maintain(context);
    await provisioner.maintain(context);

    expect(recorded.map(({ object, type, reason }) => [object, type, reason])).toEqual([
      [pod, 'Warning', reasonExportUnavailable],
      [pod, 'Normal', reasonExportAvailable],
    ]);
    expect(recorded[0]?.message).toMatch(
      /^export b \(nfs\.example\.com:\/srv\/b\) is left out of placement, its deletes retried until it is available: EIO: i\/o error, statfs /,
    );
    expect(recorded[1]?.message).toBe(
      'export b (nfs.example.com:/srv/b) is available again: back in placement',
    );
  });

  it('records nothing without the Pod', async () => {
    const recorded: string[] = [];
    const { dir, provisioner } = await twoExports(
      { a: 1 * gi },
      { events: { event: (_object, _type, reason) => void recorded.push(reason) } },
    );
    await using _ = dir;
    await provisioner.maintain(context);
    expect(recorded).toEqual([]);
  });
});

describe('ownPod', () => {
  it('names the Pod from POD_NAME and POD_NAMESPACE, or none when either is unset', () => {
    expect(ownPod({ POD_NAME: 'nfs-0', POD_NAMESPACE: 'storage' })).toEqual(pod);
    expect(ownPod({ POD_NAME: 'nfs-0' })).toBeUndefined();
    expect(ownPod({ POD_NAMESPACE: 'storage', POD_NAME: '' })).toBeUndefined();
  });
});
