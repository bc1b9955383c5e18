import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRelativeVolumePath } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import type { HostPathVolume } from '../src/owned-volumes.ts';
import { quotaMeasure } from '../src/quota-usage.ts';
import { FakeQuotas, prjquota } from './fake-quotas.ts';
import { claim, context, provisioned, provisionOptions, storageClass, temporaryRoot } from './fixtures.ts';

const scan = { signal: new AbortController().signal, pace: async () => {} };

function measured(pvName: string): HostPathVolume {
  return {
    namespace: 'team-a',
    claimName: 'data',
    pvName,
    claimUid: undefined,
    path: parseRelativeVolumePath(pvName),
    requestedBytes: 2 ** 20,
  };
}

describe('usage of enforced volumes', () => {
  it('is read from quota accounting, one report for a round, while other volumes are walked', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const projectQuotas = { tool: () => quotas, readMountInfo: async () => prjquota };
    const hostpath = new HostPathProvisioner({ mode: 'shared', root: root.path, projectQuotas });
    const provision = async (parameters?: Record<string, string>) =>
      provisioned(await hostpath.provision(provisionOptions(claim(), storageClass(parameters)), context));
    const [first, second] = [
      await provision({ enforceSize: 'true' }),
      await provision({ enforceSize: 'true' }),
    ];
    const walked = await provision();
    await writeFile(join(walked.spec?.hostPath?.path ?? '', 'file'), 'x');
    quotas.usage.set(1, { bytes: 5 * 2 ** 20, inodes: 7 });
    const reportsBefore = quotas.reports;
    const measure = quotaMeasure({ root: root.path, projectQuotas, now: () => 0 });

    expect(await measure(measured(first?.metadata?.name ?? ''), scan)).toEqual({
      bytes: 5 * 2 ** 20,
      inodes: 7,
    });
    expect(await measure(measured(second?.metadata?.name ?? ''), scan)).toEqual({ bytes: 0, inodes: 1 });
    expect(quotas.reports - reportsBefore).toBe(1);
    expect(await measure(measured(walked.metadata?.name ?? ''), scan)).toMatchObject({ inodes: 2 });
  });
});
