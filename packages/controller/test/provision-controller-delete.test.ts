import { afterEach, describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { statusError } from '../src/testing/status-error.ts';
import { finalizerPV } from '../src/wire-names.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import {
  deleteCounts,
  dynamicallyProvisioned,
  eventually,
  Harness,
  newVolume,
  provisionerName,
} from './controller-fixtures.ts';

const pvProtection = 'kubernetes.io/pv-protection';
let started: Harness | undefined;

afterEach(async () => {
  await started?.stop();
  started = undefined;
});

describe('ProvisionController volume deletion', () => {
  it('calls delete once when only the PersistentVolume steps of a deletion are retried', async () => {
    const volume = newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName), {
      finalizers: [finalizerPV, pvProtection],
    });
    const harness = new Harness({
      objects: [volume],
      addFinalizer: true,
      rateLimiter: () => new ItemExponentialFailureRateLimiter(1, 10),
    });
    // The asset is deleted and the PV marked for deletion, but our finalizer stays on at first.
    harness.api.failNext({
      verb: 'patch',
      resource: 'persistentvolumes',
      error: statusError('InternalError', 'etcd busy'),
    });
    started = harness.start();

    await eventually(() => expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([pvProtection]));
    expect(harness.volumes()[0]?.metadata?.deletionTimestamp).toBeDefined();
    expect(harness.provisioner.deleteCalls.map((pv) => pv.metadata?.name)).toEqual(['volume-1']);
    expect(await deleteCounts(harness.registry, '')).toEqual({ success: 1, failed: 1 });
    expect(
      harness.api
        .actions()
        .filter((a) => a.verb === 'delete' && a.resource === resources.persistentVolumes.plural),
    ).toHaveLength(2);
  });
});
