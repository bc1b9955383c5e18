import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const releaseTime = Date.parse('2025-03-01T12:00:00.000Z');

/** A root with a volume `ns1-data` of claim `old` (PV `pvc-old`) holding a file, released or not. */
async function retainedVolume(release: boolean): Promise<{ base: string; root: VolumeRoot }> {
  const base = await tempDir();
  const root = new VolumeRoot(base, { now: () => releaseTime });
  await root.createVolume(path('ns1-data'), { owner: ownerOf('ns1', 'data', 'old'), mode: 0o770 });
  await writeFile(join(base, 'ns1-data/file'), 'kept');
  if (release) expect(await root.releaseVolume(path('ns1-data'), { pvName: 'pvc-old' })).toBe('released');
  return { base, root };
}

describe('releaseVolume (onDelete: retain)', () => {
  it('stamps releasedAt on the record, keeping the data and the old claim and PV for audit', async () => {
    const { base, root } = await retainedVolume(true);

    expect(await root.readRecord(path('ns1-data'))).toEqual({
      ...ownerOf('ns1', 'data', 'old'),
      createdAt: new Date(releaseTime).toISOString(),
      releasedAt: new Date(releaseTime).toISOString(),
    });
    expect(await readFile(join(base, 'ns1-data/file'), 'utf8')).toBe('kept');
  });

  it('keeps the first release time when retried', async () => {
    const { root } = await retainedVolume(true);
    const later = new VolumeRoot(root.base, { now: () => releaseTime + 60_000 });

    expect(await later.releaseVolume(path('ns1-data'), { pvName: 'pvc-old' })).toBe('released');

    expect((await root.readRecord(path('ns1-data')))?.releasedAt).toBe(new Date(releaseTime).toISOString());
  });

  it('leaves a directory recorded for another PV untouched and says so', async () => {
    const { root } = await retainedVolume(false);

    expect(await root.releaseVolume(path('ns1-data'), { pvName: 'pvc-other' })).toBe('other-owner');

    expect((await root.readRecord(path('ns1-data')))?.releasedAt).toBeUndefined();
  });

  it('marks nothing on unrecorded data, and keeps the record of a directory moved away', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'legacy'));
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/gone'), { owner: ownerOf('ns1', 'gone', 'u1'), mode: 0o777 });
    await rename(join(base, 'ns1/gone'), join(base, 'moved'));

    expect(await root.releaseVolume(path('legacy'), { pvName: 'pvc-u1' })).toBe('unrecorded');
    expect(await root.releaseVolume(path('ns1/gone'), { pvName: 'pvc-u1' })).toBe('missing');
    expect(await root.releaseVolume(path('absent/x'), { pvName: 'pvc-u1' })).toBe('missing');

    expect((await readdir(base)).sort()).toEqual(['legacy', 'moved', 'ns1']);
    expect((await root.readRecord(path('ns1/gone')))?.claimUid).toBe('u1');
  });
});

describe('adopting a released volume', () => {
  it('hands the data to a new claim of the same namespace, whose record replaces the released one', async () => {
    const { base, root } = await retainedVolume(true);
    const owner = ownerOf('ns1', 'data', 'new');

    expect(await root.createVolume(path('ns1-data'), { owner, mode: 0o777, adopt: true })).toBe('adopted');

    const record = await root.readRecord(path('ns1-data'));
    expect(record).toMatchObject({ claimUid: 'new', pvName: 'pvc-new' });
    expect(record?.releasedAt).toBeUndefined();
    expect(await readFile(join(base, 'ns1-data/file'), 'utf8')).toBe('kept');
    expect((await readdir(base)).sort()).toEqual(['.ns1-data.kube-provisioner.json', 'ns1-data']);
    // The new PV owns it now: it can delete it, the old one cannot.
    await expect(root.deleteVolume(path('ns1-data'), { pvName: 'pvc-old' })).rejects.toThrow(/another PV/);
    expect(await root.deleteVolume(path('ns1-data'), { pvName: 'pvc-new' })).toBe('deleted');
  });

  it('refuses a released volume without adoption, or for another namespace, without naming it', async () => {
    const { root } = await retainedVolume(true);

    const plain = await rejection(
      root.createVolume(path('ns1-data'), { owner: ownerOf('ns1', 'data', 'new'), mode: 0o777 }),
    );
    const foreign = await rejection(
      root.createVolume(path('ns1-data'), { owner: ownerOf('ns2', 'data', 'x'), mode: 0o777, adopt: true }),
    );

    expect(plain.kind).toBe('ownership');
    expect(plain.message).toContain('refusing to reuse it');
    expect(foreign.kind).toBe('ownership');
    expect(foreign.message).toContain('adoption is limited to data of namespace "ns2"');
    expect(foreign.message).not.toMatch(/"ns1"|old/);
    expect((await root.readRecord(path('ns1-data')))?.claimUid).toBe('old');
  });

  it('refuses a volume kept without release: its record is still live', async () => {
    const { root } = await retainedVolume(false);

    const err = await rejection(
      root.createVolume(path('ns1-data'), { owner: ownerOf('ns1', 'data', 'new'), mode: 0o777, adopt: true }),
    );

    expect(err.message).toContain('only released or unrecorded data can be adopted');
    expect((await root.readRecord(path('ns1-data')))?.claimUid).toBe('old');
  });

  it('lets only one of two claims adopting at once win, never replacing the winner', async () => {
    const { base } = await retainedVolume(true);
    const rival = ownerOf('ns1', 'rival', 'rival');
    let raced = false;
    const fs: FsOps = {
      ...nodeFsOps,
      // Just before this claim publishes its lock, the rival completes its whole adoption.
      symlink: async (text, target) => {
        if (!raced && String(target).endsWith('/.ns1-data.kube-provisioner.lock')) {
          raced = true;
          await new VolumeRoot(base).createVolume(path('ns1-data'), {
            owner: rival,
            mode: 0o777,
            adopt: true,
          });
        }
        return nodeFsOps.symlink(text, target);
      },
    };

    const err = await rejection(
      new VolumeRoot(base, { fs }).createVolume(path('ns1-data'), {
        owner: ownerOf('ns1', 'data', 'new'),
        mode: 0o777,
        adopt: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('changed owner while being adopted');
    expect((await new VolumeRoot(base).readRecord(path('ns1-data')))?.claimUid).toBe('rival');
    expect((await readdir(base)).sort()).toEqual(['.ns1-data.kube-provisioner.json', 'ns1-data']);
  });

  it('refuses while another claim holds the adoption lock', async () => {
    const { base, root } = await retainedVolume(true);
    const lock = JSON.stringify({ ...ownerOf('ns1', 'rival', 'rival'), createdAt: '' });
    await writeFile(join(base, '.ns1-data.kube-provisioner.lock'), lock);

    const err = await rejection(
      root.createVolume(path('ns1-data'), { owner: ownerOf('ns1', 'data', 'new'), mode: 0o777, adopt: true }),
    );

    expect(err.message).toContain('is being adopted concurrently by another claim');
    expect((await root.readRecord(path('ns1-data')))?.claimUid).toBe('old');
  });

  it('completes an adoption its own claim left half-way, lock and all', async () => {
    const { base, root } = await retainedVolume(true);
    const owner = ownerOf('ns1', 'data', 'new');
    await writeFile(
      join(base, '.ns1-data.kube-provisioner.lock'),
      JSON.stringify({ ...owner, createdAt: '' }),
    );

    expect(await root.createVolume(path('ns1-data'), { owner, mode: 0o777, adopt: true })).toBe('adopted');

    expect((await root.readRecord(path('ns1-data')))?.claimUid).toBe('new');
    expect((await readdir(base)).sort()).toEqual(['.ns1-data.kube-provisioner.json', 'ns1-data']);
  });

  it('keeps the released record when the swap fails', async () => {
    const { base } = await retainedVolume(true);
    const fs: FsOps = {
      ...nodeFsOps,
      rename: async (from, to) => {
        if (String(to).endsWith('/.ns1-data.kube-provisioner.json'))
          throw Object.assign(new Error('EIO'), { code: 'EIO' });
        return nodeFsOps.rename(from, to);
      },
    };

    await expect(
      new VolumeRoot(base, { fs }).createVolume(path('ns1-data'), {
        owner: ownerOf('ns1', 'data', 'new'),
        mode: 0o777,
        adopt: true,
      }),
    ).rejects.toMatchObject({ kind: 'io', errno: 'EIO' });

    expect(await new VolumeRoot(base).readRecord(path('ns1-data'))).toMatchObject({
      claimUid: 'old',
      releasedAt: new Date(releaseTime).toISOString(),
    });
    expect((await readdir(base)).sort()).toEqual(['.ns1-data.kube-provisioner.json', 'ns1-data']);
  });
});
