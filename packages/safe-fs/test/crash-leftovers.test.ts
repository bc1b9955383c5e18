import { mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const isTemporary = (name: string) => name.startsWith('.kube-provisioner.tmp.');
const minute = 60_000;

/**
 * System calls of a process killed after writing a temporary record and before publishing it:
 * the publishing `link`/`rename` never happens, and neither does its cleanup.
 */
function killedBeforePublish(): FsOps {
  const killed = () => Promise.reject(systemErrorOf('EINTR', -4, 'killed'));
  return {
    ...nodeFsOps,
    link: (from, to) =>
      String(from).includes('.kube-provisioner.tmp.') ? killed() : nodeFsOps.link(from, to),
    unlink: (target) =>
      String(target).includes('.kube-provisioner.tmp.') ? killed() : nodeFsOps.unlink(target),
  };
}

describe('temporary record files left by a crash', () => {
  it('are recognisable, and swept by the next process once older than the grace period', async () => {
    const base = await tempDir();
    const owner = ownerOf('ns1', 'data', 'u1');
    await expect(
      new VolumeRoot(base, { fs: killedBeforePublish() }).createVolume(path('ns1/data'), {
        owner,
        mode: 0o777,
      }),
    ).rejects.toThrow('EINTR');
    const left = (await readdir(join(base, 'ns1'))).filter(isTemporary);
    expect(left).toHaveLength(1);

    // A restarted provisioner: young leftovers are kept (a live writer may own them)...
    const started = (await stat(join(base, 'ns1', left[0] ?? ''))).mtimeMs;
    const young = new VolumeRoot(base, { now: () => started + 1000 });
    expect(await young.sweepTemporaryFiles()).toEqual({ removed: [], kept: [`ns1/${left[0]}`] });

    // ...old ones go at start-up, before the first operation, in nested parents too.
    const later = new VolumeRoot(base, { now: () => started + 2 * minute });
    expect(await later.createVolume(path('other'), { owner: ownerOf('ns2', 'o', 'u2'), mode: 0o777 })).toBe(
      'created',
    );
    expect((await readdir(join(base, 'ns1'))).filter(isTemporary)).toEqual([]);
    expect(await later.createVolume(path('ns1/data'), { owner, mode: 0o777 })).toBe('created');
    expect((await readdir(join(base, 'ns1'))).sort()).toEqual([
      '.data.kube-provisioner.json',
      '.kube-provisioner-parent.json',
      'data',
    ]);
  });

  it('are swept whenever their directory is touched, once per grace period', async () => {
    const base = await tempDir();
    let now = Date.now();
    const root = new VolumeRoot(base, { now: () => now });
    await root.createVolume(path('ns1/a'), { owner: ownerOf('ns1', 'a', 'u1'), mode: 0o777 });
    // Left by another replica killed mid-write, after this process started.
    const leftover = join(base, 'ns1/.kube-provisioner.tmp.0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f');
    await writeFile(leftover, '{}');
    await utimes(leftover, new Date(now - 5 * minute), new Date(now - 5 * minute));

    now += 2 * minute;
    await root.deleteVolume(path('ns1/a'), { pvName: 'pvc-u1' });

    expect(await readdir(base)).toEqual([]);
  });

  it('are never swept while this process is still writing them, however old they look', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1'));
    let sweep: Promise<unknown> | undefined;
    const far = Date.now() + 60 * minute;
    const slow: FsOps = {
      ...nodeFsOps,
      link: async (from, to) => {
        sweep ??= new VolumeRoot(base, { now: () => far }).sweepTemporaryFiles();
        expect(await sweep).toMatchObject({ removed: [] });
        await nodeFsOps.link(from, to);
      },
    };

    expect(
      await new VolumeRoot(base, { fs: slow }).createVolume(path('ns1/data'), {
        owner: ownerOf('ns1', 'data', 'u1'),
        mode: 0o777,
      }),
    ).toBe('created');
    expect(sweep).toBeDefined();
    expect((await readdir(join(base, 'ns1'))).filter(isTemporary)).toEqual([]);
  });
});
