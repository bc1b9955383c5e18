/**
 * Claims with a data source: a provisioner provisions only the sources it declares; a populator's
 * claim (KEP-1495) is left to the populator, as external-provisioner leaves it, and a clone or
 * snapshot restore the provisioner cannot do is refused rather than provisioned empty.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { ConfigurationError } from '../src/configuration-error.ts';
import { claimDataSource } from '../src/internal/claim-data-source.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import type { DataSourceKind } from '../src/provisioner.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { silentLogger } from '../src/util/logger.ts';
import {
  eventually,
  metricValue,
  newClaim,
  newStorageClass,
  processedItems,
  provisionCounts,
  provisionerName,
  RecordingProvisioner,
  useHarnesses,
} from './controller-fixtures.ts';

const { start } = useHarnesses();

const class1 = newStorageClass('class-1', provisionerName);
const dataset = { apiGroup: 'example.com', kind: 'Dataset', name: 'd1' };
const snapshot = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap-1' };

function claimFrom(
  name: string,
  uid: string,
  ref: { apiGroup?: string; kind: string; name: string; namespace?: string },
): V1PersistentVolumeClaim {
  const claim = newClaim(name, uid, 'class-1', provisionerName);
  return { ...claim, spec: { ...claim.spec, dataSourceRef: ref } };
}

/** A recording provisioner that declares `dataSources`. */
class SourceProvisioner extends RecordingProvisioner {
  readonly dataSources: readonly DataSourceKind[];

  constructor(dataSources: readonly DataSourceKind[]) {
    super();
    this.dataSources = dataSources;
  }
}

describe('ProvisionController with claim data sources', () => {
  it("leaves a populator's claim alone (no PV, a Normal event, no failure event) and provisions an ordinary claim of the same class", async () => {
    const harness = start({
      objects: [
        class1,
        claimFrom('populated', 'uid-1', dataset),
        newClaim('plain', 'uid-2', 'class-1', provisionerName),
      ],
    });
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-2']));
    await eventually(() =>
      expect(harness.events()).toContain(
        'Provisioning: Assuming an external populator will provision the volume',
      ),
    );
    await eventually(async () =>
      expect(await processedItems(harness.registry, 'claims')).toBeGreaterThanOrEqual(2),
    );
    expect(harness.provisioner.provisionCalls.map((call) => call.pvc.metadata?.name)).toEqual(['plain']);
    const populated = harness.api
      .objects(resources.events)
      .filter((event) => event.involvedObject.name === 'populated')
      .map((event) => [event.type, event.reason]);
    expect(populated).toEqual([['Normal', 'Provisioning']]);
    expect(await metricValue(harness.registry, 'workqueue_retries_total', { name: 'claims' })).toBe(0);
  });

  it('reads a data source the API server mirrored into dataSource too', async () => {
    const claim = claimFrom('populated', 'uid-1', dataset);
    const mirrored = { ...claim, spec: { ...claim.spec, dataSource: dataset } };
    const harness = start({ objects: [class1, mirrored] });
    await eventually(() =>
      expect(harness.events()).toContain(
        'Provisioning: Assuming an external populator will provision the volume',
      ),
    );
    expect(harness.volumes()).toEqual([]);
  });

  it('provisions a claim whose source the provisioner declares, handing it the source', async () => {
    const provisioner = new SourceProvisioner([{ apiGroup: 'example.com', kind: 'Dataset' }]);
    const harness = start({ provisioner, objects: [class1, claimFrom('populated', 'uid-1', dataset)] });
    await eventually(() => expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1']));
    expect(provisioner.provisionCalls[0]?.dataSource).toEqual({ ...dataset, namespace: 'default' });
  });

  it('does not take a declared kind of another API group for its own', async () => {
    const provisioner = new SourceProvisioner([{ apiGroup: 'other.example.com', kind: 'Dataset' }]);
    const harness = start({ provisioner, objects: [class1, claimFrom('populated', 'uid-1', dataset)] });
    await eventually(() =>
      expect(harness.events()).toContain(
        'Provisioning: Assuming an external populator will provision the volume',
      ),
    );
    expect(provisioner.provisionCalls).toEqual([]);
  });

  it('refuses a snapshot restore or a clone it cannot do with a ProvisioningFailed event and no PV', async () => {
    const harness = start({
      objects: [
        class1,
        claimFrom('restore', 'uid-1', snapshot),
        claimFrom('clone', 'uid-2', { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'origin' }),
      ],
    });
    await eventually(() =>
      expect([...harness.events()].sort()).toEqual([
        `ProvisioningFailed: ${provisionerName} does not support provisioning volumes from data source PersistentVolumeClaim "origin"`,
        `ProvisioningFailed: ${provisionerName} does not support provisioning volumes from data source VolumeSnapshot.snapshot.storage.k8s.io "snap-1"`,
      ]),
    );
    expect(harness.volumes()).toEqual([]);
    expect(harness.provisioner.provisionCalls).toEqual([]);
    expect(await metricValue(harness.registry, 'workqueue_retries_total', { name: 'claims' })).toBe(0);
    // Counted as failures, as Go counts a stopped attempt (`source` is `spec.dataSource.kind`, unset here).
    await eventually(async () =>
      expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 2 }),
    );
  });

  it('restores a snapshot when the provisioner declares VolumeSnapshot', async () => {
    const provisioner = new SourceProvisioner([
      { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot' },
    ]);
    const harness = start({ provisioner, objects: [class1, claimFrom('restore', 'uid-1', snapshot)] });
    await eventually(() => expect(harness.volumes()).toHaveLength(1));
    expect(provisioner.provisionCalls[0]?.dataSource).toEqual({ ...snapshot, namespace: 'default' });
    expect(Object.isFrozen(provisioner.provisionCalls[0]?.dataSource)).toBe(true);
  });
});

describe('claimDataSource', () => {
  it('prefers dataSource, and takes a cross-namespace dataSourceRef with its namespace', () => {
    const claim = claimFrom('c', 'uid-1', { ...dataset, namespace: 'datasets' });
    expect(claimDataSource(claim)).toEqual({ ...dataset, namespace: 'datasets' });
    const both = {
      ...claim,
      spec: { ...claim.spec, dataSource: { kind: 'PersistentVolumeClaim', name: 'p' } },
    };
    expect(claimDataSource(both)).toEqual({
      apiGroup: '',
      kind: 'PersistentVolumeClaim',
      name: 'p',
      namespace: 'default',
    });
    expect(claimDataSource(newClaim('c', 'uid-1', 'class-1', provisionerName))).toBeUndefined();
  });

  it('rejects a provisioner whose dataSources are not apiGroup and kind pairs', () => {
    const provisioner = Object.assign(new RecordingProvisioner(), { dataSources: [{ kind: 'Dataset' }] });
    expect(
      () =>
        new ProvisionController({
          api: new FakeKubeApi(),
          provisionerName,
          provisioner: provisioner as unknown as RecordingProvisioner,
          logger: silentLogger,
        }),
    ).toThrow(ConfigurationError);
  });
});
