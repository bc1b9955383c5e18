import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { FakeQuotas, prjquota } from './fake-quotas.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const noquota = '22 1 8:1 / / rw,relatime - xfs /dev/sda1 rw,attr2,inode64,noquota';
const enforced = storageClass({ enforceSize: 'true', hardLimitGrace: '50%', softLimitGrace: '10%' });
const mib = 2 ** 20;

function provisioner(root: string, quotas: FakeQuotas, mountInfo = prjquota): HostPathProvisioner {
  return new HostPathProvisioner({
    mode: 'shared',
    root,
    projectQuotas: { tool: () => quotas, readMountInfo: async () => mountInfo },
  });
}

const sized = (size: string) => claim({ storage: size });

describe('enforced sizes', () => {
  it('makes each volume its own project, limited to its request and the graces', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const pv = provisioned(
      await provisioner(root.path, quotas).provision(provisionOptions(sized('10Mi'), enforced), context),
    );

    const projectId = quotas.projects.get(pv.spec?.hostPath?.path ?? '');
    expect(projectId).toBe(1);
    expect(quotas.limits.get(1)).toEqual({ softBytes: 11 * mib, hardBytes: 15 * mib });
  });

  it('gives claims created at once distinct IDs, above every ID a record or the file system holds', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    quotas.foreign.set(500, { bytes: 4096, inodes: 1 });
    const hostpath = provisioner(root.path, quotas);
    const claims = Array.from({ length: 5 }, () => sized('1Mi'));

    await Promise.all(claims.map((pvc) => hostpath.provision(provisionOptions(pvc, enforced), context)));

    expect([...quotas.projects.values()].sort()).toEqual([501, 502, 503, 504, 505]);
    // A retry of a claim keeps its ID.
    await hostpath.provision(provisionOptions(claims[0] ?? sized('1Mi'), enforced), context);
    expect(quotas.projects.size).toBe(5);
  });

  it('refuses a class asking for enforcement on a root mounted without prjquota, and makes nothing', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const result = await provisioner(root.path, quotas, noquota).provision(
      provisionOptions(sized('1Mi'), enforced),
      context,
    );

    const error = failed(result, true);
    expect(error.message).toContain('without the mount option "prjquota": mount it with -o prjquota');
    expect(await readdir(root.path)).toEqual([]);
    expect(quotas.projects.size).toBe(0);
  });

  it('raises the limit on expansion and removes it on delete', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const hostpath = provisioner(root.path, quotas);
    const pvc = sized('10Mi');
    const pv = provisioned(await hostpath.provision(provisionOptions(pvc, enforced), context));

    expect(await hostpath.expand({ pv, pvc, storageClass: enforced, capacity: '20Mi' }, context)).toEqual({
      capacity: '20Mi',
    });
    expect(quotas.limits.get(1)).toEqual({ softBytes: 22 * mib, hardBytes: 30 * mib });

    await hostpath.delete(released(pv, pvc), context);
    expect(quotas.limits.size).toBe(0);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('validates the class parameters of enforcement', async () => {
    await using root = await temporaryRoot();
    const hostpath = provisioner(root.path, new FakeQuotas());
    for (const parameters of [{ hardLimitGrace: '10%' }, { enforceSize: 'true', hardLimitGrace: '10' }]) {
      const error = failed(
        await hostpath.provision(provisionOptions(sized('1Mi'), storageClass(parameters)), context),
        true,
      );
      expect(error.message).toMatch(/hardLimitGrace/);
    }
  });
});
