import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { operationContext } from '@kube-provisioner/controller/testing';
import {
  type MeasureVolume,
  UsageMonitor,
  usageExceededReason,
  type VolumeLister,
  volumeStatsMetrics,
  warnOnClaim,
} from '@kube-provisioner/controller/usage';
import { parseRelativeVolumePath, volumeUsageScanner } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner, type HostPathVolume } from '../src/index.ts';
import { claim, context, provisioned, provisionOptions, released, temporaryRoot } from './fixtures.ts';

/** The value of `metric` for PV `pvName`, as `/metrics` would serve it. */
async function sample(registry: Registry, metric: string, pvName: string): Promise<number | undefined> {
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  return values.find((value) => value.labels.persistentvolume === pvName)?.value;
}

function lister(pvs: () => V1PersistentVolume[]): VolumeLister {
  return { list: async () => ({ items: pvs(), metadata: { resourceVersion: '1' } }) };
}

interface Warning {
  readonly object: unknown;
  readonly reason: string;
  readonly message: string;
}

function recorder(): {
  events: Warning[];
  event: (object: unknown, type: string, reason: string, message: string) => void;
} {
  const events: Warning[] = [];
  return { events, event: (object, _type, reason, message) => events.push({ object, reason, message }) };
}

function volume(pvName: string, requestedBytes: number | undefined): HostPathVolume {
  return {
    pvName,
    namespace: 'ns',
    claimName: `claim-${pvName}`,
    claimUid: `uid-${pvName}`,
    path: parseRelativeVolumePath(pvName),
    requestedBytes,
  };
}

/** A monitor whose measurements are `sizes[pvName]` bytes, and the warnings it gave. */
function fixedMonitor(
  sizes: Record<string, number>,
  extra: { measure?: MeasureVolume<HostPathVolume>; now?: () => number } = {},
) {
  const registry = new Registry();
  const events = recorder();
  const monitor = new UsageMonitor<HostPathVolume>({
    registry,
    operationsPerSecond: 1000,
    scanTimeoutMs: 60_000,
    onExceeded: warnOnClaim(events),
    measure: extra.measure ?? (async (v) => ({ bytes: sizes[v.pvName] ?? 0, inodes: 1 })),
    now: extra.now,
  });
  return { registry, monitor, events: events.events };
}

describe('hostpath volume usage', () => {
  it('reports the used bytes, inodes and request of each volume it provisioned, from its maintain hook', async () => {
    await using temporary = await temporaryRoot();
    const root = temporary.path;
    const pvs: V1PersistentVolume[] = [];
    const registry = new Registry();
    const events = recorder();
    const monitor = new UsageMonitor<HostPathVolume>({
      registry,
      measure: volumeUsageScanner(root),
      operationsPerSecond: 10_000,
      scanTimeoutMs: 60_000,
      onExceeded: warnOnClaim(events),
    });
    const provisioner = new HostPathProvisioner({
      mode: 'shared',
      root,
      usage: { monitor, volumes: lister(() => pvs) },
    });
    const pvc = claim({ name: 'data', namespace: 'team-a', storage: '1Mi' });
    const pv = provisioned(await provisioner.provision(provisionOptions(pvc), context));
    pvs.push(released(pv, pvc));
    const name = pv.metadata?.name ?? '';
    const path = pv.spec?.hostPath?.path ?? '';
    await writeFile(join(path, 'small'), Buffer.alloc(10_000, 1));

    await provisioner.maintain(context);

    const used = (await sample(registry, volumeStatsMetrics.usedBytes, name)) ?? 0;
    expect(used).toBeGreaterThanOrEqual(10_000);
    expect(await sample(registry, volumeStatsMetrics.inodesUsed, name)).toBe(2);
    expect(await sample(registry, volumeStatsMetrics.requestedBytes, name)).toBe(2 ** 20);
    const text = await registry.metrics();
    expect(text).toContain(
      `${volumeStatsMetrics.usedBytes}{namespace="team-a",persistentvolumeclaim="data",persistentvolume="${name}"}`,
    );
    expect(events.events).toEqual([]);

    await writeFile(join(path, 'big'), Buffer.alloc(2 ** 21, 1));
    await provisioner.maintain(context);
    await provisioner.maintain(context);

    expect(events.events).toEqual([
      {
        object: expect.objectContaining({
          kind: 'PersistentVolumeClaim',
          metadata: expect.objectContaining({ name: 'data', namespace: 'team-a' }),
        }),
        reason: usageExceededReason,
        message: expect.stringContaining(`volume ${name} uses`),
      },
    ]);
  });

  it('measures only the volumes of its own node in per-node mode', async () => {
    await using temporary = await temporaryRoot();
    const root = temporary.path;
    const seen: string[] = [];
    const { monitor } = fixedMonitor(
      {},
      {
        measure: async (v) => {
          seen.push(v.pvName);
          return { bytes: 0, inodes: 1 };
        },
      },
    );
    const provisioners = ['node-a', 'node-b'].map(
      (nodeName) =>
        new HostPathProvisioner({
          mode: 'per-node',
          root,
          nodeName,
          usage: { monitor, volumes: lister(() => pvs) },
        }),
    );
    const pvs: V1PersistentVolume[] = [];
    for (const [index, node] of ['node-a', 'node-b'].entries()) {
      const pvc = claim({ name: `c${index}`, node, uid: `u${index}` });
      const provisioner = provisioners[index] as HostPathProvisioner;
      pvs.push(released(provisioned(await provisioner.provision(provisionOptions(pvc), context)), pvc));
    }
    // Not this provisioner's, and outside the root: never measured.
    pvs.push({
      ...pvs[0],
      metadata: {
        name: 'foreign',
        annotations: { 'pv.kubernetes.io/provisioned-by': 'other.example.com/x' },
      },
    });

    await (provisioners[0] as HostPathProvisioner).maintain(context);

    expect(seen).toEqual(['pvc-u0']);
  });

  it('warns once per crossing of the request, again only after usage went back below it', async () => {
    const sizes: Record<string, number> = { a: 10 };
    const { monitor, events } = fixedMonitor(sizes);
    const volumes = [volume('a', 100)];
    const refresh = () => monitor.refresh(volumes, context.signal, context.logger);

    await refresh();
    sizes.a = 150;
    await refresh();
    await refresh();
    expect(events).toHaveLength(1);
    sizes.a = 90;
    await refresh();
    sizes.a = 101;
    await refresh();

    expect(events.map((event) => event.reason)).toEqual([usageExceededReason, usageExceededReason]);
  });

  it('keeps the last values and their timestamp when a scan fails, and drops the series of a volume that is gone', async () => {
    let clock = 1_000_000;
    let fail = false;
    const { registry, monitor } = fixedMonitor(
      {},
      {
        now: () => clock,
        measure: async () => {
          if (fail) throw new Error('scan timed out');
          return { bytes: 4096, inodes: 3 };
        },
      },
    );

    await monitor.refresh([volume('a', 100), volume('b', 100)], context.signal, context.logger);
    fail = true;
    clock += 60_000;
    await monitor.refresh([volume('a', 100), volume('b', 100)], context.signal, context.logger);

    expect(await sample(registry, volumeStatsMetrics.usedBytes, 'a')).toBe(4096);
    expect(await sample(registry, volumeStatsMetrics.measuredTimestamp, 'a')).toBe(1000);

    await monitor.refresh([volume('a', 100)], context.signal, context.logger);
    expect(await sample(registry, volumeStatsMetrics.usedBytes, 'b')).toBeUndefined();
    expect(await sample(registry, volumeStatsMetrics.requestedBytes, 'b')).toBeUndefined();
  });

  it('gives up a scan that outlasts its timeout, keeping the previous values', async () => {
    const registry = new Registry();
    const monitor = new UsageMonitor<HostPathVolume>({
      registry,
      operationsPerSecond: 1000,
      scanTimeoutMs: 50,
      onExceeded: () => {},
      // Never finishes on its own: only the timeout's abort ends it.
      measure: (_v, { signal }) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });

    await monitor.refresh([volume('slow', 100)], context.signal, context.logger);

    expect(await sample(registry, volumeStatsMetrics.usedBytes, 'slow')).toBeUndefined();
    expect(await sample(registry, volumeStatsMetrics.requestedBytes, 'slow')).toBe(100);
  });

  it('stops reporting every volume when the leadership term ends', async () => {
    const { registry, monitor } = fixedMonitor({ a: 5 });
    const term = new AbortController();
    const leader: OperationContext = { ...operationContext(), signal: term.signal };

    await monitor.refresh([volume('a', 100)], leader.signal, leader.logger);
    expect(await sample(registry, volumeStatsMetrics.usedBytes, 'a')).toBe(5);
    term.abort();

    expect(await registry.metrics()).not.toContain('persistentvolume="a"');
  });

  it('holds all scans together to the I/O budget', async () => {
    const paced: number[] = [];
    const start = performance.now();
    const registry = new Registry();
    const monitor = new UsageMonitor<HostPathVolume>({
      registry,
      // Two calls per 100 ms slot.
      operationsPerSecond: 20,
      scanTimeoutMs: 60_000,
      onExceeded: () => {},
      measure: async (_v, { pace }) => {
        for (let call = 0; call < 5; call++) {
          await pace();
          paced.push(performance.now() - start);
        }
        return { bytes: 0, inodes: 1 };
      },
    });

    await monitor.refresh([volume('a', 1), volume('b', 1)], context.signal, context.logger);

    // Ten calls at two per 100 ms: the last waits for the fifth slot.
    expect(paced).toHaveLength(10);
    expect(paced[9]).toBeGreaterThanOrEqual(350);
  });
});
