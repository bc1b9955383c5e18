import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseRelativeVolumePath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import type { ProjectQuotaAccess } from '../src/size-enforcement.ts';
import type { ProjectUsage } from '../src/xfs-quota.ts';
import { api, boundSource, cloneOptions, hostpath, untilFinished } from './clone-fixtures.ts';
import { FakeQuotas, prjquota } from './fake-quotas.ts';
import { context, failed, provisioned, storageClass, temporaryRoot } from './fixtures.ts';

const enforced = storageClass({ enforceSize: 'true' });
const gib = 2 ** 30;

/** In-memory project quotas that also note what each assigned directory held at that moment. */
class WatchingQuotas extends FakeQuotas {
  readonly assigned: Array<{ path: string; entries: string[] }> = [];
  failAssign: Error | undefined;

  override async assign(path: string, projectId: number): Promise<void> {
    if (this.failAssign !== undefined) throw this.failAssign;
    this.assigned.push({ path, entries: await readdir(path) });
    await super.assign(path, projectId);
  }
}

/** Accounting that stops nothing, as ext4 for a provisioner with CAP_SYS_RESOURCE: each limited project is over. */
class LenientQuotas extends WatchingQuotas {
  override async report(): Promise<Map<number, ProjectUsage>> {
    const used = await super.report();
    for (const [id, { hardBytes }] of this.limits) used.set(id, { bytes: hardBytes + 4096, inodes: 3 });
    return used;
  }
}

const access = (quotas: FakeQuotas, mountInfo = prjquota): ProjectQuotaAccess => ({
  tool: () => quotas,
  readMountInfo: async () => mountInfo,
});

/** Everything below `root`, sorted. */
async function tree(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true })).sort();
}

describe('cloning into a class that enforces sizes', () => {
  it('makes the empty copy directory a project with the request as limit before copying into it', async () => {
    await using root = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(root.path);
    await writeFile(join(dir, 'a.txt'), 'alpha');
    const quotas = new WatchingQuotas();
    const provisioner = hostpath(root.path, undefined, api(bound, pv).access, access(quotas));
    const options = cloneOptions(enforced);

    const copy = provisioned(await untilFinished(() => provisioner.provision(options, context)));

    const copyDir = copy.spec?.hostPath?.path ?? '';
    expect(await readFile(join(copyDir, 'a.txt'), 'utf8')).toBe('alpha');
    const record = await new VolumeRoot(root.path).readRecord(
      parseRelativeVolumePath(copy.metadata?.name ?? ''),
    );
    const projectId = record?.projectId ?? -1;
    expect(projectId).toBeGreaterThan(0);
    // The temporary directory beside the volume, renamed into place once the copy was complete.
    expect(quotas.assigned).toEqual([{ path: expect.stringMatching(/\.copy$/u), entries: [] }]);
    expect(dirname(quotas.assigned[0]?.path ?? '')).toBe(dirname(copyDir));
    expect(quotas.projects.get(quotas.assigned[0]?.path ?? '')).toBe(projectId);
    expect(quotas.limits.get(projectId)).toEqual({
      hardBytes: gib,
      softBytes: 0,
      hardInodes: gib / 4096,
      softInodes: 0,
    });
  });

  it('after a restart reuses the project recorded by the attempt before', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path);
    const options = cloneOptions(enforced);
    // The first instance stops for good while making the copy's project, as if killed there.
    const frozen = new WatchingQuotas();
    frozen.assign = () => new Promise<void>(() => undefined);
    const first = hostpath(root.path, undefined, api(bound, pv).access, access(frozen));
    await first.provision(options, context);
    const copyPath = parseRelativeVolumePath(options.pvName);
    const recorded = (await new VolumeRoot(root.path).readRecord(copyPath))?.projectId;
    const quotas = new WatchingQuotas();

    const restarted = hostpath(root.path, undefined, api(bound, pv).access, access(quotas));
    provisioned(await untilFinished(() => restarted.provision(options, context)));

    expect(recorded).toBeGreaterThan(0);
    expect((await new VolumeRoot(root.path).readRecord(copyPath))?.projectId).toBe(recorded);
    expect([...quotas.projects.values()]).toEqual([recorded]);
    expect([...quotas.limits.keys()]).toEqual([recorded]);
  });

  it('removes the volume it made when the source is not ready yet; the retry makes it again', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path);
    const before = await tree(root.path);
    const options = cloneOptions(enforced);
    const unbound = { ...bound, status: { phase: 'Pending' } };
    const waiting = hostpath(root.path, undefined, api(unbound, pv).access, access(new WatchingQuotas()));

    expect(failed(await waiting.provision(options, context), false).message).toContain('is not Bound yet');

    expect(await tree(root.path)).toEqual(before);
    const ready = hostpath(root.path, undefined, api(bound, pv).access, access(new WatchingQuotas()));
    provisioned(await untilFinished(() => ready.provision(options, context)));
  });

  it('leaves nothing when the copy directory cannot be made a project: no volume, no limit', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path);
    const before = await tree(root.path);
    const quotas = new WatchingQuotas();
    quotas.failAssign = new Error('xfs_quota project failed');
    const fake = api(bound, pv);
    const provisioner = hostpath(root.path, undefined, fake.access, access(quotas));
    const options = cloneOptions(enforced);

    const result = await untilFinished(() => provisioner.provision(options, context));

    expect(failed(result, false).message).toBe('xfs_quota project failed');
    expect(await tree(root.path)).toEqual(before);
    expect(quotas.limits.size).toBe(0);
    expect(fake.patches).toHaveLength(2);
  });

  it('refuses a source above the limit even when the kernel lets the whole copy through', async () => {
    await using root = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(root.path);
    await writeFile(join(dir, 'a.txt'), 'alpha');
    const before = await tree(root.path);
    const quotas = new LenientQuotas();
    const fake = api(bound, pv);
    const provisioner = hostpath(root.path, undefined, fake.access, access(quotas));
    const options = cloneOptions(enforced);

    const result = await untilFinished(() => provisioner.provision(options, context));

    expect(failed(result, true).message).toContain(`does not fit the new volume's limit of ${gib} bytes`);
    expect(await tree(root.path)).toEqual(before);
    expect(quotas.assigned).toHaveLength(1);
    expect(quotas.limits.size).toBe(0);
    // The source was protected for the copy and released after it.
    expect(fake.patches).toHaveLength(2);
  });

  it('removes the volume it made when the source is refused', async () => {
    await using root = await temporaryRoot();
    await using other = await temporaryRoot();
    const { bound, pv } = await boundSource(other.path);
    const provisioner = hostpath(root.path, undefined, api(bound, pv).access, access(new WatchingQuotas()));

    const result = await provisioner.provision(cloneOptions(enforced), context);

    expect(failed(result, true).message).toContain(`is not a directory under ${root.path}`);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('refuses, before anything is made, on a root mounted without prjquota', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path);
    const before = await tree(root.path);
    const noQuota = '22 1 8:1 / / rw,relatime - xfs /dev/sda1 rw,attr2,inode64';
    const fake = api(bound, pv);
    const provisioner = hostpath(root.path, undefined, fake.access, access(new WatchingQuotas(), noQuota));

    const result = await provisioner.provision(cloneOptions(enforced), context);

    expect(failed(result, true).message).toContain('"enforceSize" cannot be honoured');
    expect(await tree(root.path)).toEqual(before);
    expect(fake.patches).toEqual([]);
  });
});
