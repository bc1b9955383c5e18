/**
 * A background clone under the controller: the claim is provisioned as soon as its copy ends, not
 * at the next retry of the controller's back-off; a failed copy reports its error at once and its
 * retry still waits out the back-off. The clock only moves when the test moves it, so a PV that
 * appears without moving it was not waiting for a back-off.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { CloneJobs } from '../src/clone/index.ts';
import type { OperationContext, Provisioner, ProvisionOptions, ProvisionResult } from '../src/provisioner.ts';
import {
  claimFixture,
  eventually,
  FakeKubeApi,
  fixtureProvisionerName,
  Harness,
  ManualClock,
  pump,
  storageClassFixture,
  volumeFor,
} from '../src/testing/index.ts';
import { ManualVolumes } from './support/manual-clone-volumes.ts';

/** Clones claims with {@link CloneJobs} onto volumes named after their PV. */
class CloningProvisioner implements Provisioner {
  readonly dataSources = [{ apiGroup: '', kind: 'PersistentVolumeClaim' }];
  readonly volumes = new ManualVolumes();
  readonly #jobs: CloneJobs<string, { readonly label: string }>;

  constructor(api: FakeKubeApi) {
    const access = {
      claims: api.resource(resources.persistentVolumeClaims),
      volumes: api.resource(resources.persistentVolumes),
    };
    this.#jobs = new CloneJobs(this.volumes, access, fixtureProvisionerName);
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    const { pvc, pvName, dataSource } = options;
    if (dataSource === undefined) return { pv: volumeFor(options) };
    const request = { pvc, pvName, path: pvName, dataSource, volume: { label: pvName }, pathOf };
    const step = await this.#jobs.step(request, context);
    if (!step.ended) return { error: new Error(step.message), state: 'Background' };
    return { pv: volumeFor(options) };
  }

  async delete(): Promise<void> {}
}

const pathOf = (pv: Readonly<V1PersistentVolume>): string => pv.metadata?.name ?? '';

const sourceClaim: V1PersistentVolumeClaim = {
  ...claimFixture({ name: 'src', uid: 'src-uid' }),
  spec: { ...claimFixture().spec, volumeName: 'pv-src' },
  status: { phase: 'Bound' },
};

const sourceVolume: V1PersistentVolume = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-src', annotations: { 'pv.kubernetes.io/provisioned-by': fixtureProvisionerName } },
  spec: {
    capacity: { storage: '1Gi' },
    persistentVolumeReclaimPolicy: 'Retain',
    claimRef: { namespace: 'team-a', name: 'src', uid: 'src-uid' },
  },
  status: { phase: 'Bound' },
};

const target: V1PersistentVolumeClaim = {
  ...claimFixture({ name: 'copy', uid: 'copy-uid' }),
  spec: { ...claimFixture().spec, dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } },
};

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** A controller cloning `src` into `copy`, on a clock that moves only when the test moves it. */
async function cloning() {
  const clock = new ManualClock(1_700_000_000_000);
  const api = new FakeKubeApi({ clock });
  const provisioner = new CloningProvisioner(api);
  const harness = new Harness({
    clock,
    api,
    provisioner,
    objects: [storageClassFixture(), sourceClaim, sourceVolume, target],
  }).start();
  stops.push(async () => {
    const done = harness.stop();
    await pump(clock, 2_000);
    await done;
  });
  // The first call starts the copy (the clock moves only until then: the caches sync on it).
  const copy = await eventually(
    () => provisioner.volumes.copies.get('pvc-copy-uid') ?? expect.fail('no copy started'),
    { clock },
  );
  return { clock, harness, copy, volumes: provisioner.volumes };
}

describe('a background clone under ProvisionController', () => {
  it('is provisioned as soon as its copy ends, without waiting for the back-off', async () => {
    const { harness, copy } = await cloning();

    copy.finish({ entries: 3, bytes: 12, skipped: 0 });

    await eventually(() =>
      expect(harness.volumes().map((pv) => pv.metadata?.name)).toContain('pvc-copy-uid'),
    );
    const source = harness.claims().find((claim) => claim.metadata?.name === 'src');
    expect(source?.metadata?.finalizers ?? []).toEqual([]);
  });

  it('reports a failed copy at once, and starts it again only after the back-off', async () => {
    const { clock, harness, copy, volumes } = await cloning();
    volumes.copies.clear();

    copy.finish(new Error('disk full'));

    await eventually(() => expect(harness.events()).toContain('ProvisioningFailed: disk full'));
    await pump(clock, 10_000, 1_000);
    expect(volumes.copies.size).toBe(0);
    await eventually(() => expect(volumes.copies.has('pvc-copy-uid')).toBe(true), { clock, stepMs: 1_000 });
  });
});
