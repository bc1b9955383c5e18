/**
 * The archives' bytes in the retention metrics: with usage reporting on, each sweep publishes what
 * the kept archives hold and counts what the removed ones held, walking each archive once within the
 * usage monitor's I/O budget; without it, no byte series exist rather than a misleading 0.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageMonitor } from '@kube-provisioner/controller/usage';
import {
  parseRelativeVolumePath,
  type RelativeVolumePath,
  scanVolumeUsage,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ArchiveMetrics, archiveMetricNames } from '../src/archive-metrics.ts';
import { ArchiveSizes } from '../src/archive-sizes.ts';
import type { NfsVolume } from '../src/volume-usage.ts';
import { context, nfsProvisioner, provisionerName, temporaryRoot } from './fixtures.ts';

const hour = 3_600_000;
const noVolumes = { list: async () => ({ items: [], metadata: { resourceVersion: '1' } }) };

/** Archives `namespace/name` holding `files` files of 10 000 bytes, made two hours ago. */
async function archive(
  base: string,
  name: string,
  files: number,
  retentionMs?: number,
): Promise<RelativeVolumePath> {
  const root = new VolumeRoot(base, { now: () => Date.now() - 2 * hour });
  const path = parseRelativeVolumePath(`team-a/${name}`);
  const owner = {
    claimUid: name,
    namespace: 'team-a',
    claimName: name,
    pvName: `pvc-${name}`,
    provisioner: provisionerName,
  };
  await root.createVolume(path, { owner, mode: 0o777 });
  for (let index = 0; index < files; index++) {
    await writeFile(join(base, path, `f${index}`), 'x'.repeat(10_000));
  }
  const result = await root.archiveVolume(path, { pvName: owner.pvName, retentionMs });
  if (result.outcome !== 'archived') throw new Error(`${path} was not archived`);
  return result.archivedPath;
}

async function bytesOf(base: string, path: RelativeVolumePath): Promise<number> {
  const usage = await scanVolumeUsage(base, path);
  if (usage === undefined) throw new Error(`${path} is gone`);
  return usage.bytes;
}

function usageMonitor(registry: Registry, operationsPerSecond = 10_000): UsageMonitor<NfsVolume> {
  return new UsageMonitor<NfsVolume>({
    registry,
    measure: async () => undefined,
    operationsPerSecond,
    scanTimeoutMs: 60_000,
    onExceeded: () => {},
  });
}

async function sample(registry: Registry, name: string): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  return (await metric?.get())?.values[0]?.value;
}

describe('archive bytes', () => {
  it('publishes the bytes of the kept archives and counts those of the expired ones it removed', async () => {
    await using root = await temporaryRoot();
    const expired = await archive(root.path, 'old', 3, hour);
    const kept = await archive(root.path, 'kept', 2);
    const [expiredBytes, keptBytes] = [await bytesOf(root.path, expired), await bytesOf(root.path, kept)];
    const registry = new Registry();
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      archiveMetrics: new ArchiveMetrics(registry),
      usage: { monitor: usageMonitor(registry), volumes: noVolumes },
    });

    await provisioner.maintain(context);

    expect(expiredBytes).toBeGreaterThanOrEqual(30_000);
    expect(await sample(registry, archiveMetricNames.bytes)).toBe(keptBytes);
    expect(await sample(registry, archiveMetricNames.removedBytes)).toBe(expiredBytes);
    await provisioner.maintain(context);
    expect(await sample(registry, archiveMetricNames.bytes)).toBe(keptBytes);
    expect(await sample(registry, archiveMetricNames.removedBytes)).toBe(expiredBytes);
  });

  it('has no byte series without usage reporting', async () => {
    await using root = await temporaryRoot();
    await archive(root.path, 'kept', 1);
    const registry = new Registry();
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      archiveMetrics: new ArchiveMetrics(registry),
    });

    await provisioner.maintain(context);

    expect(await sample(registry, archiveMetricNames.kept)).toBe(1);
    expect(registry.getSingleMetric(archiveMetricNames.bytes)).toBeUndefined();
    expect(registry.getSingleMetric(archiveMetricNames.removedBytes)).toBeUndefined();
  });

  it('walks each archive once, within the I/O budget, and forgets an archive the sweep no longer finds', async () => {
    await using root = await temporaryRoot();
    const kept = await archive(root.path, 'kept', 4);
    let paced = 0;
    const budget = {
      scanOptions: (signal: AbortSignal) => ({
        signal,
        pace: async () => {
          paced++;
        },
      }),
    };
    const sizes = new ArchiveSizes(root.path, budget);
    const abort = new AbortController();

    const first = await sizes.measure(kept, abort.signal, context.logger);
    sizes.endSweep();
    const walked = paced;
    const again = await sizes.measure(kept, abort.signal, context.logger);
    sizes.endSweep();
    sizes.endSweep();
    await sizes.measure(kept, abort.signal, context.logger);

    expect(first).toBe(await bytesOf(root.path, kept));
    expect(walked).toBeGreaterThanOrEqual(5);
    expect(again).toBe(first);
    expect(paced).toBe(2 * walked);
  });

  it('does not walk again an archive whose walk the scan timeout cut off, and counts nothing for it', async () => {
    await using root = await temporaryRoot();
    const huge = await archive(root.path, 'huge', 1);
    let walks = 0;
    const timedOut = {
      scanOptions: () => {
        walks++;
        return {
          signal: AbortSignal.abort(new DOMException('scan timeout', 'TimeoutError')),
          pace: async () => {},
        };
      },
    };
    const sizes = new ArchiveSizes(root.path, timedOut);
    const abort = new AbortController();

    const first = await sizes.measure(huge, abort.signal, context.logger);
    sizes.endSweep();
    const second = await sizes.measure(huge, abort.signal, context.logger);

    expect([first, second]).toEqual([undefined, undefined]);
    expect(walks).toBe(1);
  });
});
