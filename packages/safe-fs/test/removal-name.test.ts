/**
 * A delete of a recorded volume renames it to its removal name (beside it, reserved, for its PV)
 * before its record goes, instead of rewriting the record with `removingAt`: that name is what tells
 * an interrupted delete of this package from a volume moved away, so every state a crash leaves is
 * finished by the retry, and nothing else is ever taken for it.
 */
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { removalName } from '../src/reserved-names.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const volume = parseRelativeVolumePath('data');
const owner = ownerOf('ns1', 'data', 'u1');
const removal = removalName('data', owner.pvName);

/** `nodeFsOps` whose `call` fails with EIO (a crash there) when its path ends in `suffix`. */
function failing(call: 'rmdir' | 'unlink' | 'rename', suffix: string): FsOps {
  return {
    ...nodeFsOps,
    [call]: async (...args: [string, string]) => {
      if (String(args[0]).endsWith(suffix)) throw systemErrorOf('EIO', -5, call);
      await (nodeFsOps[call] as (...args: [string, string]) => Promise<void>)(...args);
    },
  };
}

async function volumeWithData(base: string): Promise<VolumeRoot> {
  const root = new VolumeRoot(base);
  await root.createVolume(volume, { owner, mode: 0o777 });
  await mkdir(join(base, 'data/sub'));
  await writeFile(join(base, 'data/sub/file'), 'data');
  return root;
}

describe('a delete renames the volume to its removal name before its record goes', () => {
  it('a delete interrupted while emptying leaves the volume where it was, with its record, for the retry', async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    const crashing = failing('unlink', '/file');
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toThrow('EIO');
    expect((await readdir(base)).sort()).toEqual(['.data.kube-provisioner.json', 'data']);
    expect(await root.releaseVolume(volume, { pvName: owner.pvName })).toBe('released');

    expect(await root.deleteVolume(volume, { pvName: owner.pvName })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });

  it('a delete interrupted after the rename is finished by its retry, record and removal name', async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    const crashing = failing('unlink', '.data.kube-provisioner.json');
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toThrow('EIO');
    expect((await readdir(base)).sort()).toEqual(['.data.kube-provisioner.json', removal].sort());

    expect(await root.deleteVolume(volume, { pvName: owner.pvName })).toBe('missing');
    expect(await readdir(base)).toEqual([]);
  });

  it('a delete interrupted after its record went leaves only the removal name, which its retry removes', async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    const crashing = failing('rmdir', removal);
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toThrow('EIO');
    expect(await readdir(base)).toEqual([removal]);

    expect(await root.deleteVolume(volume, { pvName: owner.pvName })).toBe('missing');
    expect(await readdir(base)).toEqual([]);
  });

  it("a retry after another PV's volume was made at the same path removes only its own leftover", async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    const crashing = failing('rmdir', removal);
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toThrow('EIO');
    const other = ownerOf('ns1', 'data', 'u2');
    await root.createVolume(volume, { owner: other, mode: 0o777 });
    await writeFile(join(base, 'data/theirs'), 'kept');

    expect(await root.deleteVolume(volume, { pvName: owner.pvName })).toBe('missing');
    expect((await readdir(base)).sort()).toEqual(['.data.kube-provisioner.json', 'data'].sort());
    expect(await readdir(join(base, 'data'))).toEqual(['theirs']);
    expect((await root.readRecord(volume))?.pvName).toBe(other.pvName);
    // Without a leftover of its own, another PV's volume is refused as before.
    await expect(root.deleteVolume(volume, { pvName: owner.pvName })).rejects.toMatchObject({
      kind: 'ownership',
    });
  });

  it('a directory swapped in before the rename is put back untouched; the emptied volume stays where it was moved', async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    let swapped = false;
    const swapping: FsOps = {
      ...nodeFsOps,
      rename: async (from, to) => {
        if (!swapped && String(to).endsWith(removal)) {
          swapped = true;
          await rename(join(base, 'data'), join(base, 'moved'));
          await mkdir(join(base, 'data'));
          await writeFile(join(base, 'data/someone-elses'), 'kept');
        }
        await nodeFsOps.rename(from, to);
      },
    };
    await expect(
      new VolumeRoot(base, { fs: swapping }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toMatchObject({ kind: 'io', message: expect.stringContaining('moved or replaced') });
    expect(await readdir(join(base, 'data'))).toEqual(['someone-elses']);
    // The PV's own volume was emptied through its descriptor before it was moved.
    expect(await readdir(join(base, 'moved'))).toEqual([]);
    expect(await root.readRecord(volume)).toBeUndefined();
    expect(await readdir(base)).not.toContain(removal);
  });

  it('a kept volume (retained) is still stamped removingAt before the rename, which a take-back reads', async () => {
    const base = await tempDir();
    const root = await volumeWithData(base);
    await root.releaseVolume(volume, { pvName: owner.pvName });
    const crashing = failing('rename', '/data');
    await expect(
      new VolumeRoot(base, { fs: crashing }).deleteVolume(volume, { pvName: owner.pvName }),
    ).rejects.toThrow('EIO');
    expect((await root.readRecord(volume))?.removingAt).toBeDefined();
  });
});
