import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { resources } from '@kube-provisioner/controller/client';
import { createLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { UsageMonitor } from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import type { RootSpace } from '../src/root-capacity.ts';
import { type RootOfSet, RootSetProvisioner, type RootSetVolume } from '../src/root-set-provisioner.ts';
import {
  claim,
  context,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const gi = 1024 ** 3;

/** Directories `fast` and `bulk`, bulk the roomier, and a provisioner that starts with `fast` only. */
async function fastThenBulk() {
  const fast = await temporaryRoot();
  const bulk = await temporaryRoot();
  const free: Record<string, number> = { fast: 10 * gi, bulk: 20 * gi };
  const root = (name: string, path: string): RootOfSet => {
    const space = async (): Promise<RootSpace> => ({ capacityBytes: 100 * gi, freeBytes: free[name] ?? 0 });
    return {
      name,
      path,
      capacity: { space, read: async () => ({ ...(await space()), reservedBytes: 0, volumes: 0 }) },
    };
  };
  const roots = { fast: root('fast', fast.path), bulk: root('bulk', bulk.path) };
  const provisioner = new RootSetProvisioner({ nodeName: 'node-a', roots: [roots.fast] });
  return {
    provisioner,
    roots,
    root,
    paths: { fast: fast.path, bulk: bulk.path },
    async [Symbol.asyncDispose]() {
      await fast[Symbol.asyncDispose]();
      await bulk[Symbol.asyncDispose]();
    },
  };
}

const pathOf = (pv: V1PersistentVolume) => pv.spec?.hostPath?.path ?? '';

async function provisionOn(provisioner: RootSetProvisioner, sc = storageClass()) {
  const pvc = claim({ node: 'node-a' });
  return { pvc, pv: provisioned(await provisioner.provision(provisionOptions(pvc, sc), context)) };
}

describe('a root set changed without a restart', () => {
  it('places new volumes on a root added to it, the roomiest', async () => {
    await using set = await fastThenBulk();
    expect(pathOf((await provisionOn(set.provisioner)).pv).startsWith(`${set.paths.fast}/`)).toBe(true);

    expect(set.provisioner.setRoots([set.roots.fast, set.roots.bulk])).toEqual({
      added: [set.paths.bulk],
      retired: [],
    });
    const { pv } = await provisionOn(set.provisioner);
    expect(pathOf(pv)).toBe(join(set.paths.bulk, pv.metadata?.name ?? ''));
    expect(set.provisioner.placeableRoots.map((root) => root.name)).toEqual(['fast', 'bulk']);
  });

  it('takes no new volume on a root taken out, and still expands and deletes the volumes it holds', async () => {
    await using set = await fastThenBulk();
    set.provisioner.setRoots([set.roots.fast, set.roots.bulk]);
    const onBulk = await provisionOn(set.provisioner);
    expect(pathOf(onBulk.pv).startsWith(`${set.paths.bulk}/`)).toBe(true);

    expect(set.provisioner.setRoots([set.roots.fast])).toEqual({ added: [], retired: [set.paths.bulk] });
    // bulk is still the roomier, and gets nothing new.
    const next = await provisionOn(set.provisioner);
    expect(pathOf(next.pv).startsWith(`${set.paths.fast}/`)).toBe(true);
    expect(set.provisioner.shouldExpand(onBulk.pv)).toBe(true);
    expect(
      await set.provisioner.expand(
        { pv: onBulk.pv, pvc: onBulk.pvc, capacity: '2Gi', storageClass: storageClass() },
        context,
      ),
    ).toEqual({ capacity: '2Gi' });
    await access(pathOf(onBulk.pv));
    await set.provisioner.delete(released(onBulk.pv, onBulk.pvc), context);
    expect(await readdir(set.paths.bulk)).not.toContain(onBulk.pv.metadata?.name);
  });

  it('reschedules every claim while no root takes new volumes, and places again once one is listed', async () => {
    await using set = await fastThenBulk();
    const old = await provisionOn(set.provisioner);
    expect(set.provisioner.setRoots([])).toEqual({ added: [], retired: [set.paths.fast] });

    for (const sc of [storageClass(), storageClass({ roots: 'fast' })]) {
      const pvc = claim({ node: 'node-a' });
      const result = await set.provisioner.provision(provisionOptions(pvc, sc), context);
      expect(result).toEqual({
        state: 'Reschedule',
        error: new Error(
          'node node-a has no root that takes new volumes (its node roots file lists none for it): rescheduling the claim',
        ),
      });
    }
    await set.provisioner.delete(released(old.pv, old.pvc), context);

    // Listed again under another name: the same directory, placeable again.
    const renamed = { ...set.roots.fast, name: 'nvme' };
    expect(set.provisioner.setRoots([renamed])).toEqual({ added: [set.paths.fast], retired: [] });
    const { pv } = await provisionOn(set.provisioner, storageClass({ roots: 'nvme' }));
    expect(pathOf(pv).startsWith(`${set.paths.fast}/`)).toBe(true);
  });

  it('refuses a set whose root is inside a retired one or holds it, and keeps the old set', async () => {
    await using set = await fastThenBulk();
    set.provisioner.setRoots([set.roots.bulk]);
    const inside = set.root('inner', join(set.paths.fast, 'inner'));
    expect(() => set.provisioner.setRoots([set.roots.bulk, inside])).toThrow(
      `root inner (${join(set.paths.fast, 'inner')}) and the retired root fast (${set.paths.fast}), which still serves its volumes, are one inside the other`,
    );
    expect(() => set.provisioner.setRoots([set.roots.bulk, { ...set.roots.fast, name: 'bulk' }])).toThrow(
      'root name bulk is given twice',
    );
    expect(set.provisioner.placeableRoots).toEqual([set.roots.bulk]);
  });

  it('serves roots given as retired, at start or in a change, without placing on them', async () => {
    await using set = await fastThenBulk();
    const provisioner = new RootSetProvisioner({
      nodeName: 'node-a',
      roots: [set.roots.bulk],
      retiredRoots: [set.roots.fast],
    });
    expect(provisioner.placeableRoots).toEqual([set.roots.bulk]);
    expect(provisioner.setRoots([set.roots.fast], [set.roots.bulk])).toEqual({
      added: [set.paths.fast],
      retired: [set.paths.bulk],
    });
    const onFast = await provisionOn(provisioner);
    expect(pathOf(onFast.pv).startsWith(`${set.paths.fast}/`)).toBe(true);

    // Both retired: nothing takes new volumes, the one made is still deleted.
    provisioner.setRoots([], [set.roots.fast, set.roots.bulk]);
    expect(await provisioner.provision(provisionOptions(claim({ node: 'node-a' })), context)).toMatchObject({
      state: 'Reschedule',
    });
    await provisioner.delete(released(onFast.pv, onFast.pvc), context);
    expect(await readdir(set.paths.fast)).not.toContain(onFast.pv.metadata?.name);
    expect(
      () =>
        new RootSetProvisioner({
          nodeName: 'node-a',
          roots: [set.roots.bulk],
          retiredRoots: [{ ...set.roots.fast, name: 'bulk' }],
        }),
    ).toThrow('root name bulk is given twice');
  });

  it('measures the usage of volumes on a retired root and on a root added later', async () => {
    await using set = await fastThenBulk();
    const measured: string[] = [];
    const monitor = new UsageMonitor<RootSetVolume>({
      registry: new Registry(),
      operationsPerSecond: 1000,
      scanTimeoutMs: 10_000,
      onExceeded: () => {},
      measure: async (volume) => {
        measured.push(`${volume.root === set.paths.fast ? 'fast' : 'bulk'} ${volume.path}`);
        return { bytes: 0, inodes: 0 };
      },
    });
    const api = new FakeKubeApi();
    const provisioner = new RootSetProvisioner({
      nodeName: 'node-a',
      roots: [set.roots.fast],
      usage: { monitor, volumes: api.resource(resources.persistentVolumes) },
    });
    const onFast = (await provisionOn(provisioner)).pv;
    provisioner.setRoots([set.roots.bulk]);
    const onBulk = (await provisionOn(provisioner)).pv;
    const bound = (pv: V1PersistentVolume, claimName: string): V1PersistentVolume => ({
      ...pv,
      metadata: {
        ...pv.metadata,
        annotations: { ...pv.metadata?.annotations, [annDynamicallyProvisioned]: defaultProvisionerName },
      },
      spec: { ...pv.spec, claimRef: { name: claimName, namespace: 'team-a' } },
    });
    api.seed(resources.persistentVolumes, bound(onFast, 'one'), bound(onBulk, 'two'));

    await provisioner.maintain({ ...context, logger: createLogger({ level: 'silent', write: () => {} }) });

    expect(measured.sort()).toEqual([`bulk ${onBulk.metadata?.name}`, `fast ${onFast.metadata?.name}`]);
  });
});
