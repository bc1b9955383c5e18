/**
 * Claims that name a VolumeAttributesClass: the PV controller binds a claim only to a PV whose
 * `spec.volumeAttributesClassName` equals the claim's, so the controller writes it; the class comes
 * from a cache that starts with the first such claim; only CSI PVs can carry it, so a provisioner
 * opts in.
 */
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { statusError } from '../src/testing/status-error.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import {
  eventually,
  type Harness,
  metricValue,
  newClaim,
  newStorageClass,
  newVolumeAttributesClass,
  processedItems,
  provisionCounts,
  provisionerName,
  RecordingProvisioner,
  useHarnesses,
  volumeFor,
} from './controller-fixtures.ts';

const { start } = useHarnesses();

/** A provisioner of CSI volumes, the only PVs that can carry a VolumeAttributesClass. */
class CsiProvisioner extends RecordingProvisioner {
  constructor() {
    super();
    this.provisionResult = (options) => {
      const { hostPath: _hostPath, ...spec } = volumeFor(options).spec ?? {};
      return {
        pv: {
          metadata: { name: options.pvName },
          spec: { ...spec, csi: { driver: 'csi.example.com', volumeHandle: options.pvName } },
        },
      };
    };
  }

  supportsVolumeAttributesClasses(): boolean {
    return true;
  }
}

const startCsi = (options: Parameters<typeof start>[0] = {}) =>
  start({ ...options, provisioner: new CsiProvisioner() });

const class1 = newStorageClass('class-1', provisionerName);
const gold = newVolumeAttributesClass('gold', provisionerName, { iops: '3000' });

function claimWithClass(name: string, uid: string, attributesClass: string): V1PersistentVolumeClaim {
  const claim = newClaim(name, uid, 'class-1', provisionerName);
  return { ...claim, spec: { ...claim.spec, volumeAttributesClassName: attributesClass } };
}

/** Events recorded about claims, with how often each was seen. */
function claimEvents(harness: Harness, reason: string): CoreV1Event[] {
  return harness.api.objects(resources.events).filter((event) => event.reason === reason);
}

const fastRetries = { rateLimiter: () => new ItemExponentialFailureRateLimiter(1, 10) };

describe('ProvisionController with VolumeAttributesClasses', () => {
  it("writes the claim's VolumeAttributesClass into the PV and hands the class to provision", async () => {
    const harness = startCsi({ objects: [class1, gold, claimWithClass('claim-1', 'uid-1', 'gold')] });
    await eventually(() => expect(harness.volumes()).toHaveLength(1));
    expect(harness.volumes()[0]?.spec?.volumeAttributesClassName).toBe('gold');
    const [call] = harness.provisioner.provisionCalls;
    expect(call?.volumeAttributesClass?.metadata?.name).toBe('gold');
    expect(call?.volumeAttributesClass?.parameters).toEqual({ iops: '3000' });
    expect(Object.isFrozen(call?.volumeAttributesClass?.parameters)).toBe(true);
  });

  it("makes the PV's class name the claim's whatever the provisioner wrote", async () => {
    const harness = startCsi({
      objects: [
        class1,
        gold,
        claimWithClass('claim-1', 'uid-1', 'gold'),
        newClaim('claim-2', 'uid-2', 'class-1', provisionerName),
      ],
    });
    const csiResult = harness.provisioner.provisionResult;
    harness.provisioner.provisionResult = async (options) => {
      const result = await csiResult(options);
      if ('error' in result) return result;
      return { pv: { ...result.pv, spec: { ...result.pv.spec, volumeAttributesClassName: 'silver' } } };
    };
    await eventually(() => expect(harness.volumes()).toHaveLength(2));
    const byName = new Map(
      harness.volumes().map((pv) => [pv.metadata?.name, pv.spec?.volumeAttributesClassName]),
    );
    expect(byName.get('pvc-uid-1')).toBe('gold');
    expect(byName.get('pvc-uid-2')).toBeUndefined();
  });

  it('refuses a claim that names a class when the provisioner does not support classes, reading none', async () => {
    const harness = start({
      ...fastRetries,
      objects: [class1, gold, claimWithClass('claim-1', 'uid-1', 'gold')],
    });
    const message = `${provisionerName} does not support VolumeAttributesClasses: the claim names "gold", which only a CSI volume can carry`;
    await eventually(() => expect(harness.events()).toContain(`ProvisioningFailed: ${message}`));
    await eventually(async () =>
      expect(await processedItems(harness.registry, 'claims')).toBeGreaterThanOrEqual(1),
    );
    expect(harness.provisioner.provisionCalls).toEqual([]);
    expect(harness.volumes()).toEqual([]);
    expect(await metricValue(harness.registry, 'workqueue_retries_total', { name: 'claims' })).toBe(0);
    expect(harness.api.actions().filter((action) => action.resource === 'volumeattributesclasses')).toEqual(
      [],
    );
  });

  it('reads no VolumeAttributesClass while no claim names one', async () => {
    const harness = startCsi({ objects: [class1, newClaim('claim-1', 'uid-1', 'class-1', provisionerName)] });
    await eventually(() => expect(harness.volumes()).toHaveLength(1));
    expect(harness.provisioner.provisionCalls[0]).not.toHaveProperty('volumeAttributesClass');
    expect(harness.api.actions().filter((action) => action.resource === 'volumeattributesclasses')).toEqual(
      [],
    );
  });

  it('retries a claim whose class does not exist yet, with an event naming it, and provisions once it does', async () => {
    const harness = startCsi({
      ...fastRetries,
      objects: [class1, claimWithClass('claim-1', 'uid-1', 'gold')],
    });
    await eventually(() =>
      expect(harness.events()).toContain(
        'ProvisioningFailed: volumeattributesclasses.storage.k8s.io "gold" not found',
      ),
    );
    expect(harness.volumes()).toEqual([]);
    expect(harness.provisioner.provisionCalls).toEqual([]);

    await harness.api.resource(resources.volumeAttributesClasses).create(gold);
    await eventually(() => expect(harness.volumes()[0]?.spec?.volumeAttributesClassName).toBe('gold'));
  });

  it('refuses a class of another driver with one ProvisioningFailed event, no PV and no retry', async () => {
    const foreign = newVolumeAttributesClass('gold', 'ebs.csi.aws.com', { iops: '3000' });
    const harness = startCsi({
      ...fastRetries,
      objects: [class1, foreign, claimWithClass('claim-1', 'uid-1', 'gold')],
    });
    const message = `VolumeAttributesClass "gold" referenced in the claim is for driver "ebs.csi.aws.com", which does not match driver name "${provisionerName}"`;
    await eventually(() => expect(harness.events()).toContain(`ProvisioningFailed: ${message}`));
    await eventually(async () =>
      expect(await processedItems(harness.registry, 'claims')).toBeGreaterThanOrEqual(1),
    );
    expect(claimEvents(harness, 'ProvisioningFailed').map((event) => [event.type, event.count])).toEqual([
      ['Warning', 1],
    ]);
    expect(harness.provisioner.provisionCalls).toEqual([]);
    expect(harness.volumes()).toEqual([]);
    expect(await metricValue(harness.registry, 'workqueue_retries_total', { name: 'claims' })).toBe(0);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 });
  });

  it('accepts a class of an additional provisioner name', async () => {
    const harness = startCsi({
      objects: [
        class1,
        newVolumeAttributesClass('gold', 'in-tree.example.com/legacy'),
        claimWithClass('claim-1', 'uid-1', 'gold'),
      ],
      additionalProvisionerNames: ['in-tree.example.com/legacy'],
    });
    await eventually(() => expect(harness.volumes()[0]?.spec?.volumeAttributesClassName).toBe('gold'));
  });

  it('says why it cannot read classes, and keeps provisioning claims that name none', async () => {
    const harness = startCsi({
      ...fastRetries,
      objects: [class1, gold, claimWithClass('claim-1', 'uid-1', 'gold')],
    });
    harness.api.prependReactor({ verb: 'list', resource: 'volumeattributesclasses' }, () => {
      throw statusError(
        'Forbidden',
        'volumeattributesclasses.storage.k8s.io is forbidden: User "system:serviceaccount:p:p" cannot list resource "volumeattributesclasses"',
      );
    });
    await eventually(() =>
      expect(harness.events()).toContain(
        'ProvisioningFailed: cannot read VolumeAttributesClass "gold": volumeattributesclasses.storage.k8s.io is forbidden: User "system:serviceaccount:p:p" cannot list resource "volumeattributesclasses"',
      ),
    );
    harness.api.seed(
      resources.persistentVolumeClaims,
      newClaim('claim-2', 'uid-2', 'class-1', provisionerName),
    );
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-2']));
  });
});
