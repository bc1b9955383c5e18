import { constants } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { type FsOps, nodeFsOps } from '@kube-provisioner/safe-fs';
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

/** System calls counting the ownership records read (a link's text, or a file in the older format). */
function countingRecordReads(): { fs: FsOps; reads: () => number } {
  let reads = 0;
  const fs: FsOps = {
    ...nodeFsOps,
    open(path, flags, mode) {
      const readOnly = (flags & (constants.O_WRONLY | constants.O_RDWR)) === 0;
      if (readOnly && String(path).endsWith('.kube-provisioner.json')) reads++;
      return nodeFsOps.open(path, flags, mode);
    },
    readlink(path) {
      if (String(path).endsWith('.kube-provisioner.json')) reads++;
      return nodeFsOps.readlink(path);
    },
  };
  return { fs, reads: () => reads };
}

/** An instance on `root` in `mode` counting its record reads, and how many one enforced create makes. */
function countingInstance(root: string, quotas: FakeQuotas, mode: 'shared' | 'per-node') {
  const { fs, reads } = countingRecordReads();
  const projectQuotas = { tool: () => quotas, readMountInfo: async () => prjquota };
  const hostpath = new HostPathProvisioner({ mode, root, nodeName: 'node-a', fs, projectQuotas });
  const node = mode === 'per-node' ? 'node-a' : undefined;
  const readsOfCreate = async (): Promise<number> => {
    const before = reads();
    const pvc = claim({ storage: '1Mi', node });
    provisioned(await hostpath.provision(provisionOptions(pvc, enforced), context));
    return reads() - before;
  };
  return { readsOfCreate };
}

describe('enforced sizes', () => {
  it('makes each volume its own project, limited to its request and the graces', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const pv = provisioned(
      await provisioner(root.path, quotas).provision(provisionOptions(sized('10Mi'), enforced), context),
    );

    const projectId = quotas.projects.get(pv.spec?.hostPath?.path ?? '');
    expect(projectId).toBe(1);
    expect(quotas.limits.get(1)).toEqual({
      softBytes: 11 * mib,
      hardBytes: 15 * mib,
      softInodes: 0,
      hardInodes: 10_000,
    });
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

  it('reads the records of a per-node root once per process to find free IDs, not once per create', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const instance = countingInstance(root.path, quotas, 'per-node');
    const reads: number[] = [];
    for (let created = 0; created < 8; created++) reads.push(await instance.readsOfCreate());

    // However many volumes the root holds, a create reads as many records as the first one did.
    expect(new Set(reads)).toEqual(new Set([reads[0]]));
    expect([...quotas.projects.values()]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // A restarted instance reads them all again, and goes on above them.
    const restarted = countingInstance(root.path, quotas, 'per-node');
    expect(await restarted.readsOfCreate()).toBeGreaterThanOrEqual(8);
    expect(Math.max(...quotas.projects.values())).toBe(9);
  });

  it('reads every record of a shared root on each create: another replica may have led in between', async () => {
    await using root = await temporaryRoot();
    const instance = countingInstance(root.path, new FakeQuotas(), 'shared');
    const reads: number[] = [];
    for (let created = 0; created < 4; created++) reads.push(await instance.readsOfCreate());

    expect(reads[3]).toBe((reads[0] ?? 0) + 3);
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
    expect(quotas.limits.get(1)).toMatchObject({ softBytes: 22 * mib, hardBytes: 30 * mib });

    await hostpath.delete(released(pv, pvc), context);
    expect(quotas.limits.size).toBe(0);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('limits inodes to one per 4 KiB of the hard limit, raises them on expansion, clears them on delete', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const hostpath = provisioner(root.path, quotas);
    const plain = storageClass({ enforceSize: 'true' });
    const pvc = sized('100Mi');
    const pv = provisioned(await hostpath.provision(provisionOptions(pvc, plain), context));
    expect(quotas.limits.get(1)).toEqual({
      softBytes: 0,
      hardBytes: 100 * mib,
      softInodes: 0,
      hardInodes: 25_600,
    });

    await hostpath.expand({ pv, pvc, storageClass: plain, capacity: '200Mi' }, context);
    expect(quotas.limits.get(1)).toEqual({
      softBytes: 0,
      hardBytes: 200 * mib,
      softInodes: 0,
      hardInodes: 51_200,
    });

    await hostpath.delete(released(pv, pvc), context);
    expect(quotas.limits.has(1)).toBe(false);
  });

  it('gives a small volume at least 10 000 inodes, and a class a number of its own or none', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const hostpath = provisioner(root.path, quotas);
    const create = async (parameters: Record<string, string>) => {
      const pvc = sized('1Mi');
      const storage = storageClass({ enforceSize: 'true', ...parameters });
      const pv = provisioned(await hostpath.provision(provisionOptions(pvc, storage), context));
      return { pv, pvc, storage, id: quotas.projects.get(pv.spec?.hostPath?.path ?? '') ?? 0 };
    };

    const small = await create({});
    expect(quotas.limits.get(small.id)?.hardInodes).toBe(10_000);
    const fixed = await create({ inodeLimit: '300' });
    expect(quotas.limits.get(fixed.id)?.hardInodes).toBe(300);
    // A fixed number stays what the class says whatever the size.
    await hostpath.expand({ ...fixed, storageClass: fixed.storage, capacity: '1Gi' }, context);
    expect(quotas.limits.get(fixed.id)).toMatchObject({ hardBytes: 2 ** 30, hardInodes: 300 });
    const unlimited = await create({ inodeLimit: 'none' });
    expect(quotas.limits.get(unlimited.id)).toEqual({
      softBytes: 0,
      hardBytes: mib,
      softInodes: 0,
      hardInodes: 0,
    });
  });

  it('validates the class parameters of enforcement', async () => {
    await using root = await temporaryRoot();
    const hostpath = provisioner(root.path, new FakeQuotas());
    for (const [parameters, name] of [
      [{ hardLimitGrace: '10%' }, 'hardLimitGrace'],
      [{ enforceSize: 'true', hardLimitGrace: '10' }, 'hardLimitGrace'],
      [{ inodeLimit: '1000' }, 'inodeLimit'],
      [{ enforceSize: 'true', inodeLimit: '10k' }, 'inodeLimit'],
    ] as const) {
      const error = failed(
        await hostpath.provision(provisionOptions(sized('1Mi'), storageClass(parameters)), context),
        true,
      );
      expect(error.message).toContain(`"${name}"`);
    }
  });
});
