import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import type { RootSpace } from '../src/root-capacity.ts';
import { type RootOfSet, RootSetProvisioner } from '../src/root-set-provisioner.ts';
import { annTakeBackFrom } from '../src/take-back.ts';
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

const gi = 1024 ** 3;

/** Roots `fast` and `bulk` in fresh directories, whose free space the test sets. */
async function twoRoots() {
  const fast = await temporaryRoot();
  const bulk = await temporaryRoot();
  const free: Record<string, number> = { fast: 10 * gi, bulk: 10 * gi };
  const reads: string[] = [];
  const root = (name: string, path: string): RootOfSet => ({
    name,
    path,
    capacity: {
      space: async (): Promise<RootSpace> => {
        reads.push(`space ${name}`);
        return { capacityBytes: 100 * gi, freeBytes: free[name] ?? 0 };
      },
      read: async () => {
        reads.push(`read ${name}`);
        return { capacityBytes: 10 * gi, freeBytes: free[name] ?? 0, reservedBytes: 9 * gi, volumes: 1 };
      },
    },
  });
  let changes = 0;
  const provisioner = new RootSetProvisioner({
    nodeName: 'node-a',
    roots: [root('fast', fast.path), root('bulk', bulk.path)],
    onVolumesChanged: () => {
      changes += 1;
    },
  });
  return {
    provisioner,
    free,
    reads,
    paths: { fast: fast.path, bulk: bulk.path },
    changes: () => changes,
    async [Symbol.asyncDispose]() {
      await fast[Symbol.asyncDispose]();
      await bulk[Symbol.asyncDispose]();
    },
  };
}

const pathOf = (pv: V1PersistentVolume) => pv.spec?.hostPath?.path ?? '';

async function provisionOn(
  provisioner: RootSetProvisioner,
  sc: V1StorageClass = storageClass(),
  storage = '1Gi',
) {
  const pvc = claim({ node: 'node-a', storage });
  return { pvc, pv: provisioned(await provisioner.provision(provisionOptions(pvc, sc), context)) };
}

describe('several roots on one node', () => {
  it('puts a new volume on the root with the most free space, its PV path naming that root', async () => {
    await using roots = await twoRoots();
    roots.free.bulk = 20 * gi;
    const { pv } = await provisionOn(roots.provisioner);

    expect(pathOf(pv)).toBe(join(roots.paths.bulk, pv.metadata?.name ?? ''));
    expect(await readdir(roots.paths.fast)).toEqual([]);
    expect(roots.changes()).toBe(1);
    // Free space alone: one statfs per root, no list of the volumes placed.
    expect(roots.reads.sort()).toEqual(['space bulk', 'space fast']);
  });

  it('breaks a tie by the first root name', async () => {
    await using roots = await twoRoots();
    const { pv } = await provisionOn(roots.provisioner);
    expect(pathOf(pv).startsWith(`${roots.paths.bulk}/`)).toBe(true);
  });

  it('uses only the roots its class names, and refuses a name the node lacks', async () => {
    await using roots = await twoRoots();
    roots.free.bulk = 20 * gi;
    const { pv } = await provisionOn(roots.provisioner, storageClass({ roots: 'fast' }));
    expect(pathOf(pv).startsWith(`${roots.paths.fast}/`)).toBe(true);

    const pvc = claim({ node: 'node-a' });
    const unknown = storageClass({ roots: 'fast,ssd' });
    const error = failed(await roots.provisioner.provision(provisionOptions(pvc, unknown), context), true);
    expect(error.message).toBe(
      'parameter "roots" names "ssd", not a root or label of this node: its roots are fast, bulk',
    );
  });

  it('reschedules a claim no root can hold, naming the node and each root, with nothing made', async () => {
    await using roots = await twoRoots();
    roots.free.fast = 2 * gi;
    roots.free.bulk = 3 * gi;
    const pvc = claim({ node: 'node-a', storage: '4Gi' });
    const result = await roots.provisioner.provision(provisionOptions(pvc), context);

    expect(result).toEqual({
      error: new Error(
        `node node-a has no root with ${4 * gi} bytes free for the claim (bytes free per root: fast ${2 * gi}, bulk ${3 * gi}): rescheduling the claim`,
      ),
      state: 'Reschedule',
    });
    expect([...(await readdir(roots.paths.fast)), ...(await readdir(roots.paths.bulk))]).toEqual([]);
    expect(roots.changes()).toBe(0);
  });

  it('measures enforced classes against the unreserved space of each root', async () => {
    await using roots = await twoRoots();
    // 10 GiB free on each disk, but 9 of each root's 10 GiB promised to enforced volumes.
    const pvc = claim({ node: 'node-a', storage: '2Gi' });
    const sized = storageClass({ enforceSize: 'true' });
    const result = await roots.provisioner.provision(provisionOptions(pvc, sized), context);

    expect(result).toMatchObject({ state: 'Reschedule' });
    expect('error' in result && result.error.message).toContain(
      `bytes unreserved by enforced volumes per root: fast ${gi}, bulk ${gi}`,
    );
    expect(roots.reads.sort()).toEqual(['read bulk', 'read fast']);
  });

  it('finishes a retried claim on the root it started on, whatever the free space says now', async () => {
    await using roots = await twoRoots();
    roots.free.fast = 20 * gi;
    const pvc = claim({ node: 'node-a' });
    const first = provisioned(await roots.provisioner.provision(provisionOptions(pvc), context));
    roots.free.bulk = 40 * gi;
    const again = provisioned(await roots.provisioner.provision(provisionOptions(pvc), context));

    expect(pathOf(again)).toBe(pathOf(first));
    expect(pathOf(first).startsWith(`${roots.paths.fast}/`)).toBe(true);
    expect(await readdir(roots.paths.bulk)).toEqual([]);
  });

  it('deletes a volume on the root its PV path names', async () => {
    await using roots = await twoRoots();
    roots.free.fast = 20 * gi;
    const onFast = await provisionOn(roots.provisioner);
    roots.free.bulk = 40 * gi;
    const onBulk = await provisionOn(roots.provisioner);

    await roots.provisioner.delete(released(onFast.pv, onFast.pvc), context);

    expect(await readdir(roots.paths.fast)).toEqual([]);
    expect(await readdir(roots.paths.bulk)).toContain(onBulk.pv.metadata?.name);
  });

  it('refuses to delete or expand a PV under none of its roots, naming them', async () => {
    await using roots = await twoRoots();
    await using elsewhere = await temporaryRoot();
    const { pv, pvc } = await provisionOn(roots.provisioner);
    const moved: V1PersistentVolume = {
      ...pv,
      spec: { ...pv.spec, hostPath: { path: join(elsewhere.path, 'pvc-x') } },
    };
    const message = `the volume's path ${join(elsewhere.path, 'pvc-x')} is under none of this node's roots (fast=${roots.paths.fast}, bulk=${roots.paths.bulk})`;

    await expect(roots.provisioner.delete(released(moved, pvc), context)).rejects.toThrow(message);
    await expect(
      roots.provisioner.expand({ pv: moved, pvc, capacity: '2Gi', storageClass: storageClass() }, context),
    ).rejects.toThrow(message);
    expect(
      await roots.provisioner.expand({ pv, pvc, capacity: '2Gi', storageClass: storageClass() }, context),
    ).toEqual({ capacity: '2Gi' });
  });

  it('gives back retained data from the root that holds it, not the roomiest', async () => {
    await using roots = await twoRoots();
    const retain = storageClass({ onDelete: 'retain' });
    roots.free.fast = 20 * gi;
    const old = await provisionOn(roots.provisioner, retain);
    await writeFile(join(pathOf(old.pv), 'data.txt'), 'kept');
    await roots.provisioner.delete(released(old.pv, old.pvc), context);
    roots.free.bulk = 40 * gi;

    const taking = claim({ node: 'node-a', annotations: { [annTakeBackFrom]: old.pv.metadata?.name ?? '' } });
    const pv = provisioned(await roots.provisioner.provision(provisionOptions(taking, retain), context));

    expect(pathOf(pv).startsWith(`${roots.paths.fast}/`)).toBe(true);
    expect(await readdir(roots.paths.bulk)).toEqual([]);
  });

  it('refuses roots that cannot be told apart', async () => {
    const capacity = {
      space: async () => ({ capacityBytes: 0, freeBytes: 0 }),
      read: async () => ({ capacityBytes: 0, freeBytes: 0, reservedBytes: 0, volumes: 0 }),
    };
    const make = (roots: readonly Omit<RootOfSet, 'capacity'>[]) =>
      new RootSetProvisioner({ nodeName: 'node-a', roots: roots.map((root) => ({ ...root, capacity })) });
    expect(() =>
      make([
        { name: 'a', path: '/srv/a' },
        { name: 'a', path: '/srv/b' },
      ]),
    ).toThrow('root name a is given twice');
    expect(() =>
      make([
        { name: 'a', path: '/srv/a' },
        { name: 'b', path: '/srv/a/b' },
      ]),
    ).toThrow('root b (/srv/a/b) is inside root a (/srv/a)');
    expect(() =>
      make([
        { name: 'a', path: '/srv/a/' },
        { name: 'b', path: '/srv//a/b' },
      ]),
    ).toThrow('root b (/srv/a/b) is inside root a (/srv/a)');
    expect(() => make([{ name: 'a', path: 'srv/a' }])).toThrow('it is not absolute');
    expect(() => make([{ name: 'Fast', path: '/srv/a' }])).toThrow('root name or label "Fast" must be');
  });

  it('is refused by a single-root provisioner, which has no named roots', async () => {
    await using root = await temporaryRoot();
    const provisioner = new HostPathProvisioner({ mode: 'per-node', root: root.path, nodeName: 'node-a' });
    const pvc = claim({ node: 'node-a' });
    const error = failed(
      await provisioner.provision(provisionOptions(pvc, storageClass({ roots: 'fast' })), context),
      true,
    );
    expect(error.message).toContain('parameter "roots" needs named roots');
    expect(await readdir(root.path)).toEqual([]);
  });
});
