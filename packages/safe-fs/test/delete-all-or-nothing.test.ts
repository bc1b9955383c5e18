/**
 * Deleting a volume that this process may not empty completely (on NFS with `root_squash`, a
 * workload's directory of another user) removes nothing: the refusal comes before the first unlink.
 * The end-to-end proof on a real kernel NFS mount is in the nfs-subdir package
 * (`nfs-subdir.kernel-nfs.e2e.test.ts`); here `access` is made to refuse one directory.
 */
import { readlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, isSafeFsError, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

/** `nodeFsOps` whose `access` refuses the directory `refused` (an absolute path) with EACCES. */
function refusing(refused: string): FsOps {
  return {
    ...nodeFsOps,
    access: async (target, mode) => {
      // Directories are checked through their descriptor: `/proc/self/fd/<fd>`.
      if (readlinkSync(target) === refused) throw systemErrorOf('EACCES', -13, 'access');
      return nodeFsOps.access?.(target, mode);
    },
  };
}

async function volumeWithWorkloadData(base: string): Promise<string> {
  await new VolumeRoot(base).createVolume(path('ns1/data'), {
    owner: ownerOf('ns1', 'data', 'u1'),
    mode: 0o777,
  });
  const volume = join(base, 'ns1/data');
  await writeFile(join(volume, 'top.txt'), 'top');
  await mkdir(join(volume, 'sub/deeper'), { recursive: true });
  await writeFile(join(volume, 'sub/f'), 'f');
  await writeFile(join(volume, 'sub/deeper/g'), 'g');
  return volume;
}

describe('deleteVolume when a directory of the volume may not be emptied', () => {
  it('refuses before removing anything, naming the directory', async () => {
    const base = await tempDir();
    const volume = await volumeWithWorkloadData(base);
    const record = await readlink(join(base, 'ns1/.data.kube-provisioner.json'));
    const root = new VolumeRoot(base, { fs: refusing(join(volume, 'sub/deeper')) });

    const error = await root
      .deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' })
      .catch((err: unknown) => err);

    expect(isSafeFsError(error) && [error.kind, error.path, error.errno]).toEqual([
      'permission',
      'ns1/data/sub/deeper',
      'EACCES',
    ]);
    expect((await readdir(volume)).sort()).toEqual(['sub', 'top.txt']);
    expect(await readFile(join(volume, 'sub/deeper/g'), 'utf8')).toBe('g');
    expect(await readFile(join(volume, 'sub/f'), 'utf8')).toBe('f');
    // Not even the record is stamped: nothing of the removal has begun.
    expect(await readlink(join(base, 'ns1/.data.kube-provisioner.json'))).toBe(record);
  });

  it('refuses a volume whose own directory may not be emptied', async () => {
    const base = await tempDir();
    const volume = await volumeWithWorkloadData(base);
    const root = new VolumeRoot(base, { fs: refusing(volume) });

    await expect(root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' })).rejects.toThrow(
      /^access "ns1\/data": permission denied \(EACCES\)/u,
    );
    expect((await readdir(volume)).sort()).toEqual(['sub', 'top.txt']);
  });

  it('deletes as before once the refusal is gone, and without access checks at all', async () => {
    const base = await tempDir();
    await volumeWithWorkloadData(base);
    const { access: _unused, ...withoutAccess } = nodeFsOps;
    expect(
      await new VolumeRoot(base, { fs: withoutAccess }).deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' }),
    ).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });
});
