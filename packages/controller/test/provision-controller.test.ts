import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { IgnoredError } from '../src/errors.ts';
import type { ProvisionControllerOptions } from '../src/provision-controller-options.ts';
import { statusError } from '../src/testing/status-error.ts';
import { annBetaStorageProvisioner, annMigratedTo, annSelectedNode, finalizerPV } from '../src/wire-names.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import {
  deleteCounts,
  dynamicallyProvisioned,
  eventually,
  type Harness,
  newClaim,
  newStorageClass,
  newVolume,
  processedItems,
  provisionCounts,
  provisionerName,
  useHarnesses,
} from './controller-fixtures.ts';

const { create, start } = useHarnesses();

describe('TestController', () => {
  it('provision for claim-1 but not claim-2', async () => {
    const harness = start({
      objects: [
        newStorageClass('class-1', provisionerName),
        newStorageClass('class-2', 'abc.def/ghi'),
        newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
        newClaim('claim-2', 'uid-1-2', 'class-2', 'abc.def/ghi'),
      ],
    });
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']));
    const [pv] = harness.volumes();
    expect(pv?.spec?.claimRef).toMatchObject({
      kind: 'PersistentVolumeClaim',
      name: 'claim-1',
      uid: 'uid-1-1',
    });
    expect(pv?.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(provisionerName);
    expect(pv?.spec?.storageClassName).toBe('class-1');
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 1, failed: 0 }),
    );
  });

  it('delete volume-1 but not volume-2', async () => {
    const harness = start({
      objects: [
        newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName)),
        newVolume('volume-2', 'Released', 'Delete', dynamicallyProvisioned('abc.def/ghi')),
      ],
    });
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['volume-2']));
    expect(await deleteCounts(harness.registry, '')).toEqual({ success: 1, failed: 0 });
    expect(harness.provisioner.deleteCalls.map((pv) => pv.metadata?.name)).toEqual(['volume-1']);
  });

  it("don't provision, because it is ignored", async () => {
    const harness = start({
      objects: [
        newStorageClass('class-1', provisionerName),
        newClaim('claim-2', 'uid-1-1', 'class-1', provisionerName),
      ],
    });
    harness.provisioner.provisionResult = () => ({ error: new IgnoredError('not mine'), state: 'Finished' });
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.volumes()).toEqual([]);
  });

  const class1 = newStorageClass('class-1', provisionerName);
  const claim1 = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);
  const ours = dynamicallyProvisioned(provisionerName);
  const wffc = newStorageClass('class-1', provisionerName, { volumeBindingMode: 'WaitForFirstConsumer' });
  const wffcClaim = newClaim('claim-1', 'uid-1-1', 'class-1', undefined, '', {
    [annBetaStorageProvisioner]: provisionerName,
    [annSelectedNode]: 'node-1',
  });
  const claimsDone = (harness: Harness, n = 1) =>
    eventually(async () =>
      expect(await processedItems(harness.registry, 'claims')).toBeGreaterThanOrEqual(n),
    );
  const volumesDone = (harness: Harness, n = 1) =>
    eventually(async () =>
      expect(await processedItems(harness.registry, 'volumes')).toBeGreaterThanOrEqual(n),
    );
  const names = (harness: Harness) => harness.volumes().map((pv) => pv.metadata?.name);

  it("don't provision, volume already exists", async () => {
    const existing = newVolume('pvc-uid-1-1', 'Bound', 'Delete', ours);
    const harness = start({ objects: [class1, claim1, existing] });
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.provisioner.provisionCalls).toHaveLength(0);
    expect(names(harness)).toEqual(['pvc-uid-1-1']);
  });

  it("don't provision, provisioner does not support raw block", async () => {
    const block = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);
    block.spec = { ...block.spec, volumeMode: 'Block' };
    const harness = start({ objects: [class1, block] });
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    await eventually(() =>
      expect(harness.events()).toContain(
        `ProvisioningFailed: ${provisionerName} does not support block volume provisioning`,
      ),
    );
    expect(harness.volumes()).toEqual([]);
  });

  it('provision for claim-1 with storage class provisioner name distinct from controller provisioner name', async () => {
    const harness = start({
      objects: [class1, claim1],
      provisionerName: 'csi.com/mock-csi',
      additionalProvisionerNames: [provisionerName, 'foo.xyz/baz'],
    });
    await eventually(() => expect(names(harness)).toEqual(['pvc-uid-1-1']));
    expect(harness.volumes()[0]?.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(
      provisionerName,
    );
  });

  it("don't provision for claim-1 because it's already bound", async () => {
    const harness = start({
      objects: [newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName, 'volume-1')],
    });
    await claimsDone(harness);
    expect(harness.provisioner.provisionCalls).toHaveLength(0);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 0 });
  });

  it("don't provision for claim-1 because its class doesn't exist", async () => {
    const harness = start({ objects: [claim1] });
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.volumes()).toEqual([]);
  });

  it("don't delete volume-1 because it's still bound", async () => {
    const harness = start({ objects: [newVolume('volume-1', 'Bound', 'Delete', ours)] });
    await volumesDone(harness);
    expect(names(harness)).toEqual(['volume-1']);
    expect(harness.provisioner.deleteCalls).toHaveLength(0);
  });

  it("don't delete volume-1 because its reclaim policy is not delete", async () => {
    const harness = start({ objects: [newVolume('volume-1', 'Released', 'Retain', ours)] });
    await volumesDone(harness);
    expect(names(harness)).toEqual(['volume-1']);
    expect(harness.provisioner.deleteCalls).toHaveLength(0);
  });

  it('provisioner fails to provision for claim-1: no pv is created', async () => {
    const harness = start({ objects: [class1, claim1] });
    harness.provisioner.provisionResult = () => ({ error: new Error('fake error'), state: 'Finished' });
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    await eventually(() => expect(harness.events()).toContain('ProvisioningFailed: fake error'));
    expect(harness.volumes()).toEqual([]);
  });

  it('provisioner fails to delete volume-1: pv is not deleted', async () => {
    const harness = start({ objects: [newVolume('volume-1', 'Released', 'Delete', ours)] });
    harness.provisioner.deleteResult = () => {
      throw new Error('fake error');
    };
    await eventually(async () =>
      expect(await deleteCounts(harness.registry, '')).toEqual({ success: 0, failed: 1 }),
    );
    await eventually(() => expect(harness.events()).toContain('VolumeFailedDelete: fake error'));
    expect(names(harness)).toEqual(['volume-1']);
  });

  it('try to provision for claim-1 but fail to save the pv object', async () => {
    const harness = create({
      objects: [class1, claim1],
      pvSave: { strategy: 'blocking', backoff: { steps: 2, initial: 1 } },
    });
    harness.api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
      throw new Error('fake error');
    });
    harness.start();
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.volumes()).toEqual([]);
    // The blocking store cleans the asset up after the last attempt.
    expect(harness.provisioner.deleteCalls.map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']);
    await eventually(() =>
      expect(harness.events()).toContain(
        'ProvisioningFailed: Error creating provisioned PV object for claim default/claim-1: fake error. Deleting the volume.',
      ),
    );
  });

  it('try to delete volume-1 but fail to delete the pv object', async () => {
    const harness = create({ objects: [newVolume('volume-1', 'Released', 'Delete', ours)] });
    harness.api.prependReactor({ verb: 'delete', resource: 'persistentvolumes' }, () => {
      throw new Error('fake error');
    });
    harness.start();
    await eventually(async () =>
      expect(await deleteCounts(harness.registry, '')).toEqual({ success: 0, failed: 1 }),
    );
    expect(names(harness)).toEqual(['volume-1']);
  });

  it('provision for claim-1 but not claim-2, because it is ignored', async () => {
    const harness = start({
      objects: [class1, claim1, newClaim('claim-2', 'uid-1-2', 'class-1', provisionerName)],
    });
    harness.provisioner.provisionResult = (options) =>
      options.pvc.metadata?.name === 'claim-2'
        ? { error: new IgnoredError('not mine'), state: 'Finished' }
        : { pv: { metadata: { name: options.pvName }, spec: {} } };
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 1, failed: 1 }),
    );
    expect(names(harness)).toEqual(['pvc-uid-1-1']);
  });

  it('provision with Retain reclaim policy', async () => {
    const harness = start({
      objects: [newStorageClass('class-1', provisionerName, { reclaimPolicy: 'Retain' }), claim1],
    });
    await eventually(() => expect(names(harness)).toEqual(['pvc-uid-1-1']));
    expect(harness.volumes()[0]?.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
  });

  it('provision for ext provisioner', async () => {
    const harness = start({ objects: [class1, claim1] });
    await eventually(() =>
      expect(harness.events()).toContain(
        'ProvisioningSucceeded: Successfully provisioned volume pvc-uid-1-1',
      ),
    );
    expect(harness.events()).toContain(
      'Provisioning: External provisioner is provisioning volume for claim "default/claim-1"',
    );
  });

  it("PV save backoff: provision a PV and fail to save it -> it's in the queue", async () => {
    const harness = create({
      objects: [class1, claim1],
      pvSave: { strategy: 'queue', limiter: new ItemExponentialFailureRateLimiter(60_000, 60_000) },
    });
    harness.api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
      throw new Error('fake error');
    });
    harness.start();
    // The queue store counts the claim as provisioned at once and never deletes the asset.
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 1, failed: 0 }),
    );
    expect(harness.volumes()).toEqual([]);
    expect(harness.provisioner.deleteCalls).toHaveLength(0);
  });

  it("PV save backoff: provision a PV and fail to save it two times -> it's removed from the queue", async () => {
    const harness = create({
      objects: [class1, claim1],
      pvSave: { strategy: 'queue', limiter: new ItemExponentialFailureRateLimiter(1, 1) },
    });
    let failures = 0;
    harness.api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
      failures++;
      if (failures <= 2) throw new Error('fake error');
      return undefined;
    });
    harness.start();
    await eventually(() => expect(names(harness)).toEqual(['pvc-uid-1-1']));
    await eventually(() =>
      expect(harness.events()).toContain(
        'ProvisioningSucceeded: Successfully provisioned volume pvc-uid-1-1',
      ),
    );
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 1, failed: 0 });
  });

  it('remove selectedNode and claim on reschedule', async () => {
    const harness = start({ objects: [wffc, wffcClaim] });
    harness.provisioner.provisionResult = () => ({
      error: new Error('no space on node-1'),
      state: 'Reschedule',
    });
    await eventually(() =>
      expect(harness.claims()[0]?.metadata?.annotations?.[annSelectedNode]).toBeUndefined(),
    );
    expect(harness.claims()[0]?.metadata?.annotations?.[annBetaStorageProvisioner]).toBe(provisionerName);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 });
    const patch = harness.api
      .actions()
      .find((action) => action.verb === 'patch' && action.resource === 'persistentvolumeclaims');
    expect(patch).toMatchObject({
      patchType: 'merge',
      patch: { metadata: { annotations: { [annSelectedNode]: null } } },
    });
  });

  for (const [title, state] of [
    ['do not remove selectedNode after final error, only the claim', 'Finished'],
    ['do not remove selectedNode if nothing changes', 'NoChange'],
    ['do not remove selectedNode while in progress', 'Background'],
  ] as const) {
    it(title, async () => {
      const harness = start({ objects: [wffc, wffcClaim] });
      harness.provisioner.provisionResult = () => ({ error: new Error('mock error'), state });
      await eventually(async () =>
        expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
      );
      expect(harness.claims()[0]?.metadata?.annotations?.[annSelectedNode]).toBe('node-1');
    });
  }

  it('provision for ext provisioner with finalizer', async () => {
    const harness = start({ objects: [class1, claim1], addFinalizer: true });
    await eventually(() => expect(names(harness)).toEqual(['pvc-uid-1-1']));
    expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]);
  });

  it('ensure finalizer is removed if the addFinalizer config option is false', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Bound', 'Delete', ours, { finalizers: [finalizerPV] })],
    });
    await eventually(() => expect(harness.volumes()[0]?.metadata?.finalizers ?? []).toEqual([]));
  });

  it('ensure finalizer is removed if the reclaim policy is Retain or Recycle with addFinalizer enabled', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Bound', 'Retain', ours, { finalizers: [finalizerPV, 'other/keep'] })],
      addFinalizer: true,
    });
    await eventually(() => expect(harness.volumes()[0]?.metadata?.finalizers).toEqual(['other/keep']));
  });

  it('ensure finalizer is not added if the volume is under deletion, also ensures that volume is not deleted', async () => {
    const harness = start({
      objects: [
        newVolume('volume-1', 'Released', 'Delete', ours, {
          deletionTimestamp: new Date(),
          finalizers: ['other/keep'],
        }),
      ],
      addFinalizer: true,
    });
    await volumesDone(harness);
    expect(harness.volumes()[0]?.metadata?.finalizers).toEqual(['other/keep']);
    expect(harness.provisioner.deleteCalls).toHaveLength(0);
  });

  it('ensure volume with finalizer is deleted if it is in a Released state and reclaim policy is Delete', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Released', 'Delete', ours, { finalizers: [finalizerPV] })],
      addFinalizer: true,
    });
    await eventually(() => expect(harness.volumes()).toEqual([]));
    expect(await deleteCounts(harness.registry, '')).toEqual({ success: 1, failed: 0 });
  });

  it('ensure volume with finalizer is deleted if it is in a Released state and reclaim policy is Delete and already under deletion', async () => {
    const harness = start({
      objects: [
        newVolume('volume-1', 'Released', 'Delete', ours, {
          finalizers: [finalizerPV],
          deletionTimestamp: new Date(),
        }),
      ],
      addFinalizer: true,
    });
    await eventually(() => expect(harness.volumes()).toEqual([]));
    expect(harness.provisioner.deleteCalls).toHaveLength(1);
  });

  it('provisioner fails to delete the volume with finalizer, the pv is not deleted', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Released', 'Delete', ours, { finalizers: [finalizerPV] })],
      addFinalizer: true,
    });
    harness.provisioner.deleteResult = () => {
      throw new Error('fake error');
    };
    await eventually(async () =>
      expect(await deleteCounts(harness.registry, '')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]);
  });

  it('volume deletion succeeds but the pv deletion fails, the pv still exists', async () => {
    const harness = create({
      objects: [newVolume('volume-1', 'Released', 'Delete', ours, { finalizers: [finalizerPV] })],
      addFinalizer: true,
    });
    harness.api.prependReactor({ verb: 'delete', resource: 'persistentvolumes' }, () => {
      throw new Error('fake error');
    });
    harness.start();
    await eventually(async () =>
      expect(await deleteCounts(harness.registry, '')).toEqual({ success: 0, failed: 1 }),
    );
    expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]);
  });

  for (const title of [
    'ensure finalizer is added on statically provisioned, migrated, in-tree volumes',
    'ensure finalizer is added on statically provisioned, migrated, in-tree volumes if it is in a Bound state',
  ]) {
    it(title, async () => {
      const harness = start({
        objects: [newVolume('volume-1', 'Bound', 'Delete', { [annMigratedTo]: provisionerName })],
        addFinalizer: true,
      });
      await eventually(() => expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]));
    });
  }

  it('ensure finalizer is added on statically provisioned CSI volumes if it is in a Bound state', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Bound', 'Delete', {}, { csiDriver: provisionerName })],
      addFinalizer: true,
    });
    await eventually(() => expect(harness.volumes()[0]?.metadata?.finalizers).toEqual([finalizerPV]));
  });
});

describe('TestControllerSharedInformers', () => {
  it('provision for claim-1 with v1 storage class, from caller-owned informers', async () => {
    const { SharedInformer } = await import('../src/informer/shared-informer.ts');
    const { FakeKubeApi } = await import('../src/testing/fake-api.ts');
    const api = new FakeKubeApi();
    const classes = new SharedInformer(api.resource(resources.storageClasses));
    const harness = start({
      api,
      objects: [
        newStorageClass('class-1', provisionerName),
        newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
      ],
      classesInformer: classes,
    });
    const stop = new AbortController();
    const running = classes.run(stop.signal);
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']));
    stop.abort();
    await running;
  });
});

describe('deletion guard, conflicts and preconditions', () => {
  it('keeps a released volume when shouldDelete says no', async () => {
    const harness = create({
      objects: [newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName))],
    });
    Object.assign(harness.provisioner, { shouldDelete: () => false });
    harness.start();
    await eventually(async () =>
      expect(await processedItems(harness.registry, 'volumes')).toBeGreaterThanOrEqual(1),
    );
    expect(harness.provisioner.deleteCalls).toHaveLength(0);
    expect(harness.volumes()).toHaveLength(1);
  });

  it('deletes the PV object with its UID as precondition', async () => {
    const harness = start({
      objects: [newVolume('volume-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName))],
    });
    await eventually(() => expect(harness.volumes()).toEqual([]));
    const del = harness.api
      .actions()
      .find((action) => action.verb === 'delete' && action.resource === 'persistentvolumes');
    expect(del?.options).toMatchObject({ preconditions: { uid: 'uid-volume-1' } });
  });

  it.each([
    ['blocking', { pvSave: { strategy: 'blocking' } }],
    ['queue', { pvSave: { strategy: 'queue', limiter: new ItemExponentialFailureRateLimiter(1, 1) } }],
  ] satisfies [string, Pick<ProvisionControllerOptions, 'pvSave'>][])(
    '%s store: refuses a PV save that hits AlreadyExists on a PV of another claim, without cleanup',
    async (_store, save) => {
      const harness = create({
        objects: [
          newStorageClass('class-1', provisionerName),
          newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
        ],
        ...save,
      });
      harness.api.prependReactor({ verb: 'create', resource: 'persistentvolumes' }, () => {
        throw statusError('AlreadyExists', 'persistentvolumes "pvc-uid-1-1" already exists');
      });
      harness.api.prependReactor({ verb: 'get', resource: 'persistentvolumes' }, () => ({
        result: { metadata: { name: 'pvc-uid-1-1' }, spec: { claimRef: { uid: 'someone-else' } } },
      }));
      harness.start();
      await eventually(async () =>
        expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 }),
      );
      expect(harness.provisioner.deleteCalls).toHaveLength(0);
      await eventually(() =>
        expect(
          harness
            .events()
            .some((e) => e.startsWith('ProvisioningFailed: PersistentVolume "pvc-uid-1-1" already exists')),
        ).toBe(true),
      );
      expect(harness.events().filter((e) => e.startsWith('ProvisioningSucceeded'))).toEqual([]);
      // Not retried in the background: one create per provision attempt (the next is 15 s away).
      expect(
        harness.api.actions().filter((a) => a.verb === 'create' && a.resource === 'persistentvolumes'),
      ).toHaveLength(1);
    },
  );

  it('names the PV with the volumeName hook', async () => {
    const harness = start({
      objects: [
        newStorageClass('class-1', provisionerName),
        newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
      ],
      volumeName: (claim) => `${claim.metadata?.namespace}-${claim.metadata?.name}`,
    });
    await eventually(() =>
      expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['default-claim-1']),
    );
    expect(harness.provisioner.provisionCalls[0]?.pvName).toBe('default-claim-1');
  });
});
