import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIgnoredError, type Provisioner } from '@kube-provisioner/controller';
import {
  claimFixture,
  eventually,
  fixtureProvisionerName,
  Harness,
  operationContext,
  provisionOptionsFor,
  releasedVolumeFixture,
  storageClassFixture,
} from '@kube-provisioner/controller/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryProvisioner } from '../src/directory-provisioner.ts';

let root = '';
const running: Harness<DirectoryProvisioner>[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'directory-provisioner-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((harness) => harness.stop()));
  await rm(root, { recursive: true, force: true });
});

const storageClass = storageClassFixture({ reclaimPolicy: 'Retain', mountOptions: ['noatime'] });

describe('DirectoryProvisioner', () => {
  it('creates the directory and returns a PV carrying the claim and class fields, idempotently', async () => {
    // Called through the interface, with the options and context the controller passes.
    const provisioner: Provisioner = new DirectoryProvisioner(root);
    const options = provisionOptionsFor(claimFixture({ uid: 'uid-1', storage: '2Gi' }), storageClass);
    await provisioner.provision(options, operationContext());
    const result = await provisioner.provision(options, operationContext());
    expect((await stat(join(root, 'pvc-uid-1'))).isDirectory()).toBe(true);
    expect(result).toMatchObject({
      pv: {
        metadata: { name: 'pvc-uid-1' },
        spec: {
          capacity: { storage: '2Gi' },
          persistentVolumeReclaimPolicy: 'Retain',
          mountOptions: ['noatime'],
          hostPath: { path: join(root, 'pvc-uid-1') },
        },
      },
    });
  });

  it('removes the directory on delete and ignores volumes outside its root', async () => {
    const provisioner: Provisioner = new DirectoryProvisioner(root);
    const options = provisionOptionsFor(claimFixture({ uid: 'uid-2' }), storageClass);
    const result = await provisioner.provision(options, operationContext());
    if (!('pv' in result)) throw result.error;
    await provisioner.delete(result.pv, operationContext());
    await expect(stat(join(root, 'pvc-uid-2'))).rejects.toThrow();
    const foreign = { spec: { hostPath: { path: '/elsewhere/pvc-3' } } };
    await expect(provisioner.delete(foreign, operationContext())).rejects.toSatisfy(isIgnoredError);
  });
});

describe('DirectoryProvisioner under a ProvisionController', () => {
  it('gives a pending claim a bound PV backed by a directory', async () => {
    const claim = claimFixture({ uid: 'uid-3', storage: '5Gi' });
    const harness = new Harness({
      provisioner: new DirectoryProvisioner(root),
      objects: [storageClassFixture(), claim],
    }).start();
    running.push(harness);
    const [pv] = await eventually(() => {
      expect(harness.volumes()).toHaveLength(1);
      return harness.volumes();
    });
    expect(pv?.spec?.claimRef?.uid).toBe('uid-3');
    expect(pv?.spec?.capacity?.storage).toBe('5Gi');
    expect((await stat(join(root, 'pvc-uid-3'))).isDirectory()).toBe(true);
  });

  it('removes the directory and the PV once the claim is gone and the class says Delete', async () => {
    const provisioner = new DirectoryProvisioner(root);
    const claim = claimFixture({ uid: 'uid-4' });
    const provisioned = await provisioner.provision(provisionOptionsFor(claim, storageClassFixture()));
    if (!('pv' in provisioned)) throw provisioned.error;
    const released = releasedVolumeFixture(provisioned.pv, { provisioner: fixtureProvisionerName, claim });
    const harness = new Harness({ provisioner, objects: [storageClassFixture(), released] }).start();
    running.push(harness);
    await eventually(() => expect(harness.volumes()).toEqual([]));
    await expect(stat(join(root, 'pvc-uid-4'))).rejects.toThrow();
  });
});
