import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resources } from '@kube-provisioner/controller/client';
import type { CloneSourceAccess } from '@kube-provisioner/controller/clone';
import { createLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { UsageMonitor } from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import {
  type RootOfSet,
  RootSetProvisioner,
  type RootSetProvisionerOptions,
  type RootSetVolume,
} from '../src/root-set-provisioner.ts';
import { api, boundSource, cloneOptions, untilFinished } from './clone-fixtures.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const gi = 1024 ** 3;

/** `fast` with 1 GiB free, `bulk` with 50: a new volume would go to bulk. */
function roots(fast: string, bulk: string): RootOfSet[] {
  const root = (name: string, path: string, free: number): RootOfSet => ({
    name,
    path,
    capacity: {
      space: async () => ({ capacityBytes: 100 * gi, freeBytes: free }),
      read: async () => ({ capacityBytes: 100 * gi, freeBytes: free, reservedBytes: 0, volumes: 0 }),
    },
  });
  return [root('fast', fast, gi), root('bulk', bulk, 50 * gi)];
}

function rootSet(
  fast: string,
  bulk: string,
  clones?: CloneSourceAccess,
  usage?: RootSetProvisionerOptions['usage'],
) {
  // One registry for every root's clone jobs, as the program has.
  const withMetrics = clones && { ...clones, registry: new Registry() };
  return new RootSetProvisioner({ nodeName: 'node-a', roots: roots(fast, bulk), clones: withMetrics, usage });
}

describe('several roots: volumes made from data already on the node', () => {
  it('copies a clone within its source root, not onto the roomiest', async () => {
    await using fast = await temporaryRoot();
    await using bulk = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(fast.path, 'node-a');
    await writeFile(join(dir, 'a.txt'), 'alpha');
    const provisioner = rootSet(fast.path, bulk.path, api(bound, pv).access);

    const options = cloneOptions(storageClass(), 'node-a');
    const copy = provisioned(await untilFinished(() => provisioner.provision(options, context)));

    const copyDir = copy.spec?.hostPath?.path ?? '';
    expect(copyDir.startsWith(`${fast.path}/`)).toBe(true);
    expect(await readFile(join(copyDir, 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readdir(bulk.path)).toEqual([]);
  });

  it('refuses a clone whose source root the class leaves out', async () => {
    await using fast = await temporaryRoot();
    await using bulk = await temporaryRoot();
    const { bound, pv } = await boundSource(fast.path, 'node-a');
    const fake = api(bound, pv);
    const provisioner = rootSet(fast.path, bulk.path, fake.access);

    const result = await provisioner.provision(
      cloneOptions(storageClass({ roots: 'bulk' }), 'node-a'),
      context,
    );

    expect(failed(result, true).message).toBe(
      `the source volume ${pv.metadata?.name} is on root fast, which parameter "roots" of class hostpath leaves out: a clone is copied within its source's root`,
    );
    expect(fake.patches).toEqual([]);
    expect(await readdir(bulk.path)).toEqual([]);
  });

  it('refuses a clone whose source is on another node, naming it', async () => {
    await using elsewhere = await temporaryRoot();
    await using fast = await temporaryRoot();
    await using bulk = await temporaryRoot();
    const { bound, pv } = await boundSource(elsewhere.path, 'node-b');
    const fake = api(bound, pv);
    const provisioner = rootSet(fast.path, bulk.path, fake.access);

    const result = await provisioner.provision(cloneOptions(storageClass(), 'node-a'), context);

    expect(failed(result, true).message).toContain(
      `the source volume ${pv.metadata?.name} is on node node-b, not node-a`,
    );
    expect(fake.patches).toEqual([]);
  });
});

describe('several roots: usage', () => {
  it('measures each volume against the root that holds it', async () => {
    await using fast = await temporaryRoot();
    await using bulk = await temporaryRoot();
    const measured: string[] = [];
    const monitor = new UsageMonitor<RootSetVolume>({
      registry: new Registry(),
      operationsPerSecond: 1000,
      scanTimeoutMs: 10_000,
      onExceeded: () => {},
      measure: async (volume) => {
        measured.push(`${volume.root === fast.path ? 'fast' : 'bulk'} ${volume.path}`);
        return { bytes: 0, inodes: 0 };
      },
    });
    const fakeApi = new FakeKubeApi();
    const volumes = fakeApi.resource(resources.persistentVolumes);
    const provisioner = rootSet(fast.path, bulk.path, undefined, { monitor, volumes });
    const bound = (pv: V1PersistentVolume, claimName: string): V1PersistentVolume => ({
      ...pv,
      metadata: {
        ...pv.metadata,
        annotations: { ...pv.metadata?.annotations, [annDynamicallyProvisioned]: defaultProvisionerName },
      },
      spec: { ...pv.spec, claimRef: { name: claimName, namespace: 'team-a' } },
    });
    const onBulk = provisioned(
      await provisioner.provision(provisionOptions(claim({ node: 'node-a' })), context),
    );
    const onFast = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ node: 'node-a' }), storageClass({ roots: 'fast' })),
        context,
      ),
    );
    fakeApi.seed(resources.persistentVolumes, bound(onBulk, 'one'), bound(onFast, 'two'));

    await provisioner.maintain({ ...context, logger: createLogger({ level: 'silent', write: () => {} }) });

    expect(measured.sort()).toEqual([`bulk ${onBulk.metadata?.name}`, `fast ${onFast.metadata?.name}`]);
  });
});
