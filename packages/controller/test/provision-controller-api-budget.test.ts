/**
 * How the ProvisionController spends its API budget: events and the Lease on throttles of their
 * own, caches without managedFields, and first sights of objects never paced by the retry limiter.
 */
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { defaultRateLimit, type RateLimit } from '../src/client/request-limiter.ts';
import { type KubeApi, resources } from '../src/client/resource-client.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import {
  dynamicallyProvisioned,
  eventually,
  newClaim,
  newStorageClass,
  newVolume,
  provisionerName,
  useHarnesses,
} from './controller-fixtures.ts';

const { create, start } = useHarnesses();

/** A fake API whose `withRateLimit` records the limit and the resources each throttled client serves. */
function apiWithThrottles(): { api: FakeKubeApi; throttled: { limit: RateLimit; plurals: string[] }[] } {
  const api = new FakeKubeApi();
  const throttled: { limit: RateLimit; plurals: string[] }[] = [];
  Object.assign(api, {
    withRateLimit: (limit: RateLimit): KubeApi => {
      const entry = { limit, plurals: [] as string[] };
      throttled.push(entry);
      return {
        resource: (descriptor) => {
          entry.plurals.push(descriptor.plural);
          return api.resource(descriptor);
        },
      };
    },
  });
  return { api, throttled };
}

const managedFields: V1ManagedFieldsEntry[] = [
  { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { f: 1 } },
];

describe('ProvisionController API budget', () => {
  it('writes events through a client of their own throttle, at eventRateLimit', () => {
    const { api, throttled } = apiWithThrottles();
    const eventRateLimit = { qps: 7, burst: 9 };
    create({ api, eventRateLimit });
    expect(throttled).toEqual([{ limit: eventRateLimit, plurals: ['events'] }]);
  });

  it('gives the Lease a client of its own throttle too; events default to 20 QPS, burst 30', () => {
    const { api, throttled } = apiWithThrottles();
    create({ api, leaderElection: { namespace: 'kube-system' } });
    expect(throttled).toEqual([
      { limit: { qps: 20, burst: 30 }, plurals: ['events'] },
      { limit: defaultRateLimit, plurals: ['leases'] },
    ]);
  });

  it('still records events when the API cannot make throttled clients', async () => {
    const harness = start({
      objects: [
        newStorageClass('class-1', provisionerName),
        newClaim('claim-1', 'uid-1', 'class-1', provisionerName),
      ],
    });
    await eventually(() =>
      expect(harness.events()).toContain('ProvisioningSucceeded: Successfully provisioned volume pvc-uid-1'),
    );
  });

  it('caches claims and PVs without managedFields', async () => {
    const claim = newClaim('claim-1', 'uid-1', 'class-1', provisionerName);
    const released = newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName));
    const harness = start({
      objects: [
        newStorageClass('class-1', provisionerName),
        { ...claim, metadata: { ...claim.metadata, managedFields } },
        { ...released, metadata: { ...released.metadata, managedFields } },
      ],
    });
    await eventually(() => {
      expect(harness.provisioner.provisionCalls).toHaveLength(1);
      expect(harness.provisioner.deleteCalls).toHaveLength(1);
    });
    expect(harness.provisioner.provisionCalls[0]?.pvc.metadata).not.toHaveProperty('managedFields');
    expect(harness.provisioner.provisionCalls[0]?.pvc.metadata?.uid).toBe('uid-1');
    expect(harness.provisioner.deleteCalls[0]?.metadata).not.toHaveProperty('managedFields');
    // The API server's copy keeps them: only the cache is trimmed.
    await expect(
      harness.api.resource(resources.persistentVolumeClaims).get('claim-1', { namespace: 'default' }),
    ).resolves.toHaveProperty('metadata.managedFields');
  });

  it('provisions and deletes more objects at once than the retry bucket holds, without waiting for it', async () => {
    // The queues' token bucket (10/s, burst 100) paces retries only: 300 first sights pass at once,
    // where a bucket-paced queue would need 20 s for the last 200.
    const count = 300;
    const objects: object[] = [newStorageClass('class-1', provisionerName)];
    for (let i = 0; i < count; i++) {
      objects.push(newClaim(`claim-${i}`, `uid-${i}`, 'class-1', provisionerName));
      objects.push(newVolume(`released-${i}`, 'Released', 'Delete', dynamicallyProvisioned(provisionerName)));
    }
    const harness = start({ objects });
    await eventually(() => {
      expect(harness.provisioner.provisionCalls).toHaveLength(count);
      expect(harness.provisioner.deleteCalls).toHaveLength(count);
    });
  });
});
