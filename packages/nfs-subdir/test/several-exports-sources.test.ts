import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '@kube-provisioner/controller/client';
import type { CloneSourceAccess } from '@kube-provisioner/controller/clone';
import { UsageMonitor, volumeStatsMetrics } from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ArchiveMetrics, archiveMetricNames } from '../src/archive-metrics.ts';
import { exportVolumeScanner } from '../src/several-exports-usage.ts';
import { annTakeBackFrom } from '../src/take-back-request.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionerName,
  provisionOptions,
  released,
  storageClass,
} from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

/** The directory of `pv` below the mount of its export. */
function directory(mount: (name: string) => string, pv: V1PersistentVolume): string {
  const [, , name, ...rest] = (pv.spec?.nfs?.path ?? '').split('/');
  return join(mount(name ?? ''), ...rest);
}

/** A fake API holding `claims` and `volumes` for clone sources. */
function sources(claims: V1PersistentVolumeClaim[], volumes: V1PersistentVolume[]): CloneSourceAccess {
  const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });
  return {
    claims: {
      async get(name, options) {
        const found = claims.find(
          (c) => c.metadata?.name === name && c.metadata.namespace === options?.namespace,
        );
        if (found === undefined) throw notFound();
        return found;
      },
      async patch(name) {
        return claims.find((c) => c.metadata?.name === name) ?? claim();
      },
    },
    volumes: {
      async get(name) {
        const found = volumes.find((v) => v.metadata?.name === name);
        if (found === undefined) throw notFound();
        return found;
      },
    },
  };
}

describe('volumes made from other volumes on several exports', () => {
  it('takes data back on the export holding it, even when the other export has more room', async () => {
    const free = { a: 1 * gi, b: 5 * gi };
    const { dir, provisioner, mount } = await twoExports(free);
    await using _ = dir;
    const sc = storageClass({ onDelete: 'retain' });
    const old = provisioned(
      await provisioner.provision(provisionOptions(claim({ namespace: 'ns' }), sc), context),
    );
    await writeFile(join(directory(mount, old), 'file'), 'kept');
    await provisioner.delete(released(old, sc), context);
    free.a = 9 * gi;
    free.b = 1 * gi;

    const asking = claim({
      namespace: 'ns',
      name: 'again',
      annotations: { [annTakeBackFrom]: old.metadata?.name ?? '' },
    });
    const pv = provisioned(await provisioner.provision(provisionOptions(asking, sc), context));

    expect(old.spec?.nfs?.path.startsWith('/srv/b/')).toBe(true);
    expect(pv.spec?.nfs?.path.startsWith('/srv/b/')).toBe(true);
    expect(await readFile(join(directory(mount, pv), 'file'), 'utf8')).toBe('kept');
  });

  it("clones onto the source's export, and refuses when the class does not name that export", async () => {
    const claims: V1PersistentVolumeClaim[] = [];
    const volumes: V1PersistentVolume[] = [];
    const free = { a: 5 * gi, b: 1 * gi };
    const { dir, provisioner, mount } = await twoExports(free, { clones: sources(claims, volumes) });
    await using _ = dir;
    const src = claim({ namespace: 'team-a', name: 'src' });
    const srcPv = provisioned(await provisioner.provision(provisionOptions(src), context));
    await writeFile(join(directory(mount, srcPv), 'file'), 'source data');
    const name = srcPv.metadata?.name ?? '';
    volumes.push({
      ...srcPv,
      metadata: { ...srcPv.metadata, annotations: { [annDynamicallyProvisioned]: provisionerName } },
    });
    claims.push({ ...src, spec: { ...src.spec, volumeName: name }, status: { phase: 'Bound' } });
    free.a = 1 * gi;
    free.b = 9 * gi;
    const dataSource = { apiGroup: '', kind: 'PersistentVolumeClaim', namespace: 'team-a', name: 'src' };
    const copy = (sc = storageClass()) => ({
      ...provisionOptions(claim({ namespace: 'team-a', name: 'copy' }), sc),
      dataSource,
    });

    const refused = failed(await provisioner.provision(copy(storageClass({ exports: 'b' })), context), true);
    expect(refused.message).toContain("a clone is made on its source's export, a");

    const options = copy();
    let result = await provisioner.provision(options, context);
    while ('error' in result && result.state === 'Background') {
      // The copy runs in the background: let it go on between the controller's calls.
      await new Promise((resolve) => setImmediate(resolve));
      result = await provisioner.provision(options, context);
    }
    const pv = provisioned(result);
    expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
    expect(await readFile(join(directory(mount, pv), 'file'), 'utf8')).toBe('source data');
  });
});

describe('usage on several exports', () => {
  it('measures the volumes of every export below its own mount, in one set of gauges', async () => {
    const pvs: V1PersistentVolume[] = [];
    const registry = new Registry();
    const { dir, provisioner, mount } = await twoExports({ a: 1 * gi, b: 5 * gi }, (exports) => ({
      usage: {
        monitor: new UsageMonitor({
          registry,
          measure: exportVolumeScanner(exports),
          operationsPerSecond: 10_000,
          scanTimeoutMs: 60_000,
          onExceeded: () => {},
        }),
        volumes: { list: async () => ({ items: pvs, metadata: { resourceVersion: '1' } }) },
      },
    }));
    await using _ = dir;
    const sizes: Record<string, number> = {};
    for (const [exportName, bytes] of [
      ['a', 10_000],
      ['b', 20_000],
    ] as const) {
      const sc = storageClass({ exports: exportName });
      const pv = provisioned(
        await provisioner.provision(provisionOptions(claim({ name: exportName }), sc), context),
      );
      await writeFile(join(directory(mount, pv), 'file'), Buffer.alloc(bytes, 1));
      pvs.push({
        ...pv,
        metadata: { ...pv.metadata, annotations: { [annDynamicallyProvisioned]: provisionerName } },
        spec: { ...pv.spec, claimRef: { namespace: 'default', name: exportName, uid: `uid-${exportName}` } },
      });
      sizes[pv.metadata?.name ?? ''] = bytes;
    }

    await provisioner.maintain(context);

    const values = (await registry.getSingleMetric(volumeStatsMetrics.usedBytes)?.get())?.values ?? [];
    for (const [pvName, bytes] of Object.entries(sizes)) {
      const used = values.find((value) => value.labels.persistentvolume === pvName)?.value ?? 0;
      expect(used).toBeGreaterThanOrEqual(bytes);
      expect(used).toBeLessThan(bytes + 10_000);
    }
  });
});

describe('archive metrics on several exports', () => {
  it('counts the archives of every export in one series', async () => {
    const registry = new Registry();
    const { dir, provisioner } = await twoExports(
      { a: 1 * gi, b: 5 * gi },
      { archiveMetrics: new ArchiveMetrics(registry) },
    );
    await using _ = dir;
    for (const name of ['a', 'b']) {
      const sc = storageClass({ exports: name, onDelete: 'archive' });
      const pv = provisioned(await provisioner.provision(provisionOptions(claim({ name }), sc), context));
      await provisioner.delete(released(pv, sc), context);
    }

    await provisioner.maintain(context);

    const kept = (await registry.getSingleMetric(archiveMetricNames.kept)?.get())?.values ?? [];
    expect(kept.map((value) => value.value)).toEqual([2]);
  });
});
