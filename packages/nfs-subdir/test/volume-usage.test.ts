import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageMonitor, volumeStatsMetrics, warnOnClaim } from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { volumeUsageScanner } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type NfsVolume, ownedNfsVolume } from '../src/volume-usage.ts';
import {
  claim,
  context,
  nfsProvisioner,
  provisioned,
  provisionerName,
  provisionOptions,
  temporaryRoot,
} from './fixtures.ts';

/** The value of `metric` for PV `pvName`, as `/metrics` would serve it. */
async function sample(registry: Registry, metric: string, pvName: string): Promise<number | undefined> {
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  return values.find((value) => value.labels.persistentvolume === pvName)?.value;
}

function bound(pv: V1PersistentVolume, namespace: string, name: string): V1PersistentVolume {
  return { ...pv, spec: { ...pv.spec, claimRef: { namespace, name, uid: `uid-${name}` } } };
}

describe('nfs-subdir volume usage', () => {
  it('reports the used bytes and request of each volume it provisioned, from its maintain hook', async () => {
    await using root = await temporaryRoot();
    const pvs: V1PersistentVolume[] = [];
    const registry = new Registry();
    const warnings: string[] = [];
    const monitor = new UsageMonitor<NfsVolume>({
      registry,
      measure: volumeUsageScanner(root.path),
      operationsPerSecond: 10_000,
      scanTimeoutMs: 60_000,
      onExceeded: warnOnClaim({ event: (_object, _type, reason) => warnings.push(reason) }),
    });
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      usage: { monitor, volumes: { list: async () => ({ items: pvs, metadata: { resourceVersion: '1' } }) } },
    });
    const pvc = claim({ namespace: 'team-a', name: 'data' });
    const pv = bound(
      provisioned(await provisioner.provision(provisionOptions(pvc), context)),
      'team-a',
      'data',
    );
    pvs.push({
      ...pv,
      metadata: { ...pv.metadata, annotations: { [annDynamicallyProvisioned]: provisionerName } },
    });
    const name = pv.metadata?.name ?? '';
    const relative = pv.spec?.nfs?.path?.replace('/export/', '') ?? '';
    await writeFile(join(root.path, relative, 'file'), Buffer.alloc(10_000, 1));

    await provisioner.maintain(context);

    expect(await sample(registry, volumeStatsMetrics.usedBytes, name)).toBeGreaterThanOrEqual(10_000);
    expect(await sample(registry, volumeStatsMetrics.inodesUsed, name)).toBe(2);
    expect(warnings).toEqual([]);
  });

  it('measures only PVs this provisioner made below the export, bound to a claim', () => {
    const scope = { provisionerName, exportPath: '/export' };
    const pv = (
      annotations: Record<string, string>,
      path: string,
      claimName?: string,
    ): V1PersistentVolume => ({
      metadata: { name: 'pv-1', annotations },
      spec: {
        capacity: { storage: '1Mi' },
        nfs: { server, path },
        ...(claimName === undefined ? {} : { claimRef: { namespace: 'ns', name: claimName } }),
      },
    });
    const ours = { [annDynamicallyProvisioned]: provisionerName };
    expect(ownedNfsVolume(pv(ours, '/export/ns-data', 'data'), scope)).toMatchObject({
      pvName: 'pv-1',
      namespace: 'ns',
      claimName: 'data',
      path: 'ns-data',
      requestedBytes: 2 ** 20,
    });
    expect(
      ownedNfsVolume(pv({ [annDynamicallyProvisioned]: 'other' }, '/export/x', 'data'), scope),
    ).toBeUndefined();
    expect(ownedNfsVolume(pv(ours, '/elsewhere/x', 'data'), scope)).toBeUndefined();
    expect(ownedNfsVolume(pv(ours, '/export/x'), scope)).toBeUndefined();
  });
});

const server = 'nfs.example.com';
