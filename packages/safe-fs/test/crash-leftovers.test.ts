import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const isTemporary = (name: string) => name.startsWith('.kube-provisioner.tmp.');
const minute = 60_000;

/**
 * System calls of a process killed after writing a temporary record (the replacement of a record)
 * and before publishing it: the publishing `rename` never happens, and neither does its cleanup.
 */
function killedBeforePublish(): FsOps {
  const killed = () => Promise.reject(systemErrorOf('EINTR', -4, 'killed'));
  return {
    ...nodeFsOps,
    rename: (from, to) =>
      String(from).includes('.kube-provisioner.tmp.') ? killed() : nodeFsOps.rename(from, to),
    unlink: (target) =>
      String(target).includes('.kube-provisioner.tmp.') ? killed() : nodeFsOps.unlink(target),
  };
}

/** The writer tag of temporary name `name`: boot, PID namespace, PID, start time. */
function tagOf(name: string): [string, string, string, string] {
  const [boot = '', namespace = '', pid = '', start = ''] = name.split('.')[3]?.split('-') ?? [];
  return [boot, namespace, pid, start];
}

/** A volume `ns1/data` whose release was killed while replacing its record. */
async function leftoverOfKilledWrite(base: string): Promise<string> {
  const owner = ownerOf('ns1', 'data', 'u1');
  await new VolumeRoot(base).createVolume(path('ns1/data'), { owner, mode: 0o777 });
  await expect(
    new VolumeRoot(base, { fs: killedBeforePublish() }).releaseVolume(path('ns1/data'), {
      pvName: owner.pvName,
    }),
  ).rejects.toThrow('EINTR');
  const left = (await readdir(join(base, 'ns1'))).filter(isTemporary);
  expect(left).toHaveLength(1);
  return left[0] ?? '';
}

/** Plants a temporary record in `dir` as written by `tag`, last modified `ageMs` ago. */
async function plant(dir: string, tag: string, ageMs: number): Promise<string> {
  const name = `.kube-provisioner.tmp.${tag}.0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f`;
  await writeFile(join(dir, name), '{}');
  const time = new Date(Date.now() - ageMs);
  await utimes(join(dir, name), time, time);
  return name;
}

describe('temporary record files left by a crash', () => {
  it('are recognisable, name their writer, and are swept once the writer is gone', async () => {
    const base = await tempDir();
    const left = await leftoverOfKilledWrite(base);
    const [, , pid] = tagOf(left);
    expect(Number(pid)).toBe(process.pid);

    // Not being written any more (the write was killed): the next sweep removes it, young as it is.
    expect(await new VolumeRoot(base).sweepTemporaryFiles()).toEqual({ removed: [`ns1/${left}`], kept: [] });
    expect((await readdir(join(base, 'ns1'))).sort()).toEqual([
      '.data.kube-provisioner.json',
      '.kube-provisioner-parent.json',
      'data',
    ]);
    // The release never happened: the record is the one the create wrote.
    expect((await new VolumeRoot(base).readRecord(path('ns1/data')))?.releasedAt).toBeUndefined();
  });

  it('written by a dead process of this host are swept at start-up, before the first operation', async () => {
    const base = await tempDir();
    const [boot, namespace, pid, start] = tagOf(await leftoverOfKilledWrite(base));
    await rm(join(base, 'ns1'), { recursive: true });
    await mkdir(join(base, 'ns1/team'), { recursive: true });
    for (const dir of ['ns1', 'ns1/team'])
      await writeFile(join(base, dir, '.kube-provisioner-parent.json'), '{}');
    // The same PID with another start time: a process that has exited, its PID since reused.
    const dead = await plant(join(base, 'ns1/team'), `${boot}-${namespace}-${pid}-${Number(start) - 1}`, 0);
    // This very process, which is not writing it: left by an earlier failed attempt.
    const own = await plant(join(base, 'ns1/team'), `${boot}-${namespace}-${pid}-${start}`, 0);
    expect(dead).not.toBe(own);

    const root = new VolumeRoot(base);
    expect(await root.createVolume(path('other'), { owner: ownerOf('ns2', 'o', 'u2'), mode: 0o777 })).toBe(
      'created',
    );

    expect((await readdir(join(base, 'ns1/team'))).filter(isTemporary)).toEqual([]);
  });

  it('written on another host are kept while young and swept once older than the grace period', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1'));
    await writeFile(join(base, 'ns1/.kube-provisioner-parent.json'), '{}');
    const name = await plant(join(base, 'ns1'), 'ffffffff-4026531836-7-100', 0);
    const planted = (await stat(join(base, 'ns1', name))).mtimeMs;

    const young = await new VolumeRoot(base, { now: () => planted + 1000 }).sweepTemporaryFiles();
    expect(young).toEqual({ removed: [], kept: [`ns1/${name}`] });
    const old = await new VolumeRoot(base, { now: () => planted + 2 * minute }).sweepTemporaryFiles();
    expect(old).toEqual({ removed: [`ns1/${name}`], kept: [] });
  });

  it('written by a live process of this host are kept, however old: it may have them open', async () => {
    const base = await tempDir();
    const [boot, namespace] = tagOf(await leftoverOfKilledWrite(base));
    const parent = process.ppid;
    const stat = await readFile(`/proc/${parent}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const name = await plant(join(base, 'ns1'), `${boot}-${namespace}-${parent}-${start}`, 3_600_000);

    const report = await new VolumeRoot(base).sweepTemporaryFiles();

    expect(report.kept).toEqual([`ns1/${name}`]);
  });

  it('are swept whenever their directory is touched, once per grace period', async () => {
    const base = await tempDir();
    let now = Date.now();
    const root = new VolumeRoot(base, { now: () => now });
    await root.createVolume(path('ns1/a'), { owner: ownerOf('ns1', 'a', 'u1'), mode: 0o777 });
    // Left by a replica on another host killed mid-write.
    await plant(join(base, 'ns1'), 'ffffffff-4026531836-7-100', 5 * minute);

    now += 2 * minute;
    await root.deleteVolume(path('ns1/a'), { pvName: 'pvc-u1' });

    expect(await readdir(base)).toEqual([]);
  });

  it('are never swept while this process is still writing them, however old they look', async () => {
    const base = await tempDir();
    const owner = ownerOf('ns1', 'data', 'u1');
    await new VolumeRoot(base).createVolume(path('ns1/data'), { owner, mode: 0o777 });
    let sweep: Promise<unknown> | undefined;
    const far = Date.now() + 60 * minute;
    const slow: FsOps = {
      ...nodeFsOps,
      rename: async (from, to) => {
        sweep ??= new VolumeRoot(base, { now: () => far }).sweepTemporaryFiles();
        expect(await sweep).toMatchObject({ removed: [] });
        await nodeFsOps.rename(from, to);
      },
    };

    expect(
      await new VolumeRoot(base, { fs: slow }).releaseVolume(path('ns1/data'), { pvName: owner.pvName }),
    ).toBe('released');
    expect(sweep).toBeDefined();
    expect((await readdir(join(base, 'ns1'))).filter(isTemporary)).toEqual([]);
  });
});
