/**
 * End-to-end: the `kube-hostpath-provisioner` binary under the shipped RBAC publishes the usage of the
 * volumes it provisioned on `/metrics`, warns once on a claim whose volume outgrows its request, and
 * drops a volume's series once the volume is deleted.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usageExceededReason, volumeStatsMetrics } from '@kube-provisioner/controller/usage';
import { waitFor } from '@kube-provisioner/testenv';
import { freePorts } from '@kube-provisioner/testenv/internal';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useSharedCli } from './shared-cli.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const startCli = useSharedCli(env);
const timeoutMs = 90_000;

/** The value of `metric` for PV `pvName` on the instance's `/metrics`; `undefined` when absent. */
async function scrape(port: number, metric: string, pvName: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${metric}{`) && l.includes(`persistentvolume="${pvName}"`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('volume usage', () => {
  it('reports used bytes on /metrics, warns once on the claim when it outgrows its request, and forgets a deleted volume', async () => {
    const [port = 0] = await freePorts(1);
    const { namespace, program, bindClaim } = await startCli({
      prefix: 'usage',
      args: ['--usage-interval=1s'],
      healthPort: port,
      timeoutMs,
    });
    const pv = await bindClaim('data', '1Mi');
    const pvName = pv.metadata?.name ?? '';
    expect(
      await waitFor(() => scrape(port, volumeStatsMetrics.requestedBytes, pvName), {
        timeoutMs,
        description: 'the requested size',
      }),
    ).toBe(2 ** 20);

    await writeFile(join(pv.spec?.hostPath?.path ?? '', 'big'), Buffer.alloc(2 * 2 ** 20, 1));

    const used = await waitFor(
      async () => {
        const bytes = await scrape(port, volumeStatsMetrics.usedBytes, pvName);
        return bytes !== undefined && bytes >= 2 * 2 ** 20 ? bytes : undefined;
      },
      { timeoutMs, description: 'the usage of the written file' },
    );
    expect(used).toBeGreaterThanOrEqual(2 * 2 ** 20);
    const warned = async () =>
      (await core.listNamespacedEvent({ namespace })).items.filter(
        (event) => event.reason === usageExceededReason,
      );
    const [event] = await waitFor(async () => ((await warned()).length > 0 ? warned() : undefined), {
      timeoutMs,
      description: 'the Warning event on the claim',
    });
    expect(event).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'data' },
    });
    // Three more measurements of the same usage: still the one event, seen once.
    const measuredAt = (await scrape(port, volumeStatsMetrics.measuredTimestamp, pvName)) ?? 0;
    await waitFor(
      async () =>
        ((await scrape(port, volumeStatsMetrics.measuredTimestamp, pvName)) ?? 0) >= measuredAt + 3 ||
        undefined,
      { timeoutMs, description: 'three more measurements' },
    );
    const events = await warned();
    expect(events).toHaveLength(1);
    expect(events[0]?.count ?? 1).toBe(1);

    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    await waitFor(
      async () => (await scrape(port, volumeStatsMetrics.usedBytes, pvName)) === undefined || undefined,
      {
        timeoutMs,
        description: 'the series of the deleted volume to go',
      },
    );
    expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
  });
});
