import { lstat, mkdir, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, isSafeFsError, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { removalName } from '../src/reserved-names.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

describe('deleteVolume', () => {
  it('removes links inside the volume without following them', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'precious'), 'untouched');
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
    const volume = join(base, 'ns1/data');
    await mkdir(join(volume, 'deep/er'), { recursive: true });
    await writeFile(join(volume, 'deep/er/file'), 'x');
    await symlink('/', join(volume, 'root-link'));
    await symlink(outside, join(volume, 'deep/outside-link'));
    await symlink(join(outside, 'precious'), join(volume, 'deep/er/file-link'));

    expect(await root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' })).toBe('deleted');

    expect(await readFile(join(outside, 'precious'), 'utf8')).toBe('untouched');
    expect(await stat('/etc')).toBeTruthy();
    expect(await readdir(base)).toEqual([]);
  });

  it('removes the parents it created once empty, but never the base', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/team/a'), { owner: ownerOf('ns1', 'a', 'u1'), mode: 0o777 });
    await root.createVolume(path('ns1/b'), { owner: ownerOf('ns1', 'b', 'u2'), mode: 0o777 });

    await root.deleteVolume(path('ns1/team/a'), { pvName: 'pvc-u1' });
    expect(await exists(join(base, 'ns1/team'))).toBe(false);
    expect(await exists(join(base, 'ns1/b'))).toBe(true);

    await root.deleteVolume(path('ns1/b'), { pvName: 'pvc-u2' });
    expect(await readdir(base)).toEqual([]);
    expect(await exists(base)).toBe(true);
  });

  it('keeps parents it did not create', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'admin/made'), { recursive: true });
    const root = new VolumeRoot(base);
    await root.createVolume(path('admin/made/ours/data'), {
      owner: ownerOf('ns', 'data', 'u1'),
      mode: 0o777,
    });

    await root.deleteVolume(path('admin/made/ours/data'), { pvName: 'pvc-u1' });

    expect(await readdir(join(base, 'admin/made'))).toEqual([]);
  });

  it('refuses a volume recorded for another PV and touches nothing', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns2/pvc2'), { owner: ownerOf('ns2', 'pvc2', 'u2'), mode: 0o777 });
    await writeFile(join(base, 'ns2/pvc2/data'), 'theirs');

    const err = await root.deleteVolume(path('ns2/pvc2'), { pvName: 'pvc-u1' }).catch((e: unknown) => e);

    expect(isSafeFsError(err) && err.kind === 'ownership').toBe(true);
    expect((err as Error).message).toContain('is recorded for another PV');
    expect(await readFile(join(base, 'ns2/pvc2/data'), 'utf8')).toBe('theirs');
  });

  it('refuses when a parent is a symlink out of the base', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    await mkdir(join(outside, 'data'));
    await writeFile(join(outside, 'data/file'), 'x');
    await symlink(outside, join(base, 'ns1'));

    const err = await new VolumeRoot(base)
      .deleteVolume(path('ns1/data'), { pvName: 'p' })
      .catch((e: unknown) => e);

    expect(isSafeFsError(err) && err.kind === 'symlink' && err.path === 'ns1').toBe(true);
    expect(await readFile(join(outside, 'data/file'), 'utf8')).toBe('x');
  });

  it('refuses when the volume itself is a symlink', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'file'), 'x');
    await symlink(outside, join(base, 'data'));

    const err = await new VolumeRoot(base)
      .deleteVolume(path('data'), { pvName: 'p' })
      .catch((e: unknown) => e);

    expect(isSafeFsError(err) && err.kind === 'symlink').toBe(true);
    expect(await readFile(join(outside, 'file'), 'utf8')).toBe('x');
  });

  it('deletes unrecorded (legacy) volumes', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns-pvc-pv1/sub'), { recursive: true });

    expect(await new VolumeRoot(base).deleteVolume(path('ns-pvc-pv1'), { pvName: 'pv1' })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });

  it('leaves an unrecorded directory as found when told to delete only what is recorded for the PV', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await mkdir(join(base, 'ns1/upstream'), { recursive: true });
    await writeFile(join(base, 'ns1/upstream/data'), 'kept');
    await root.createVolume(path('ns1/mine'), { owner: ownerOf('ns1', 'mine', 'u1'), mode: 0o777 });

    const unrecorded = await root.deleteVolume(path('ns1/upstream'), {
      pvName: 'pvc-u1',
      recordedOnly: true,
    });
    const recorded = await root.deleteVolume(path('ns1/mine'), { pvName: 'pvc-u1', recordedOnly: true });

    expect([unrecorded, recorded]).toEqual(['unrecorded', 'deleted']);
    expect(await readdir(join(base, 'ns1'))).toEqual(['upstream']);
    expect(await readFile(join(base, 'ns1/upstream/data'), 'utf8')).toBe('kept');
  });

  it('reports a missing volume and cleans up its leftover record and parents', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    expect(await root.deleteVolume(path('nothing/here'), { pvName: 'p' })).toBe('missing');

    await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
    // The process dies after renaming the directory to its removal name, before removing its record.
    const crashing: FsOps = {
      ...nodeFsOps,
      unlink: async (target) => {
        if (String(target).endsWith('/.data.kube-provisioner.json')) throw systemErrorOf('EIO', -5, 'unlink');
        await nodeFsOps.unlink(target);
      },
    };
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' }),
    ).rejects.toThrow('EIO');
    expect((await readdir(join(base, 'ns1'))).sort()).toEqual(
      ['.data.kube-provisioner.json', '.kube-provisioner-parent.json', removalName('data', 'pvc-u1')].sort(),
    );

    expect(await root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' })).toBe('missing');
    expect(await readdir(base)).toEqual([]);
  });

  it('refuses, keeping the record, when the recorded directory was moved away rather than deleted', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
    await writeFile(join(base, 'ns1/data/file'), 'kept');
    await rename(join(base, 'ns1/data'), join(base, 'ns1/elsewhere'));

    for (const remove of [
      () => root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' }),
      () => root.archiveVolume(path('ns1/data'), { pvName: 'pvc-u1' }),
    ]) {
      await expect(remove()).rejects.toMatchObject({
        kind: 'ownership',
        message: expect.stringContaining('moved away'),
      });
    }
    expect((await root.readRecord(path('ns1/data')))?.claimUid).toBe('u1');
    // Moved back, it is still protected and deletable by its PV.
    await rename(join(base, 'ns1/elsewhere'), join(base, 'ns1/data'));
    expect(await root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });

  it('tolerates entries appearing and vanishing while it runs', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    const volume = join(base, 'data');
    for (const name of ['a', 'b', 'c']) await writeFile(join(volume, name), name);
    let raced = false;
    const racing: FsOps = {
      ...nodeFsOps,
      unlink: async (target) => {
        if (!raced && String(target).endsWith('/a')) {
          raced = true;
          // The workload deletes b and writes a new file while the tree is being removed.
          await nodeFsOps.unlink(join(volume, 'b'));
          await writeFile(join(volume, 'late'), 'x');
        }
        await nodeFsOps.unlink(target);
      },
    };

    expect(await new VolumeRoot(base, { fs: racing }).deleteVolume(path('data'), { pvName: 'pvc-u1' })).toBe(
      'deleted',
    );
    expect(raced).toBe(true);
    expect(await readdir(base)).toEqual([]);
  });

  it('unlinks a directory that was swapped for a symlink mid-walk instead of following it', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'precious'), 'untouched');
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    const volume = join(base, 'data');
    await mkdir(join(volume, 'sub'));
    let swapped = false;
    const racing: FsOps = {
      ...nodeFsOps,
      open: async (target, flags, mode) => {
        if (!swapped && String(target).endsWith('/sub')) {
          swapped = true;
          await nodeFsOps.rmdir(join(volume, 'sub'));
          await symlink(outside, join(volume, 'sub'));
        }
        return nodeFsOps.open(target, flags, mode);
      },
    };

    expect(await new VolumeRoot(base, { fs: racing }).deleteVolume(path('data'), { pvName: 'pvc-u1' })).toBe(
      'deleted',
    );
    expect(swapped).toBe(true);
    expect(await readFile(join(outside, 'precious'), 'utf8')).toBe('untouched');
  });
});
