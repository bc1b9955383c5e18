/**
 * How an ownership record is stored: the text of a symbolic link, made whole by one `symlink(2)`;
 * records stored as regular files (the older format, or where links are refused) are still read.
 */
import { lstat, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath as path, VolumeRoot } from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const owner = ownerOf('ns1', 'data', 'u1');
const recordFile = '.ns1-data.kube-provisioner.json';

/** System calls of a file system that has no symbolic links. */
const withoutSymlinks: FsOps = {
  ...nodeFsOps,
  symlink: () => Promise.reject(systemErrorOf('EPERM', -1, 'symlink')),
};

/** A volume made by an earlier version: its record a regular file, pretty-printed. */
async function olderVolume(base: string): Promise<VolumeRoot> {
  const root = new VolumeRoot(base, { fs: withoutSymlinks });
  await root.createVolume(path('ns1-data'), { owner, mode: 0o777 });
  const record = { ...owner, createdAt: '2025-01-02T03:04:05.000Z' };
  await writeFile(join(base, recordFile), `${JSON.stringify(record, undefined, 2)}\n`);
  return new VolumeRoot(base);
}

describe('an ownership record', () => {
  it('is a symbolic link whose text is the whole record, with nothing left under a temporary name', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base, { now: () => Date.parse('2025-01-02T03:04:05.000Z') });

    await root.createVolume(path('ns1-data'), { owner, mode: 0o777 });

    expect((await lstat(join(base, recordFile))).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readlink(join(base, recordFile)))).toEqual({
      ...owner,
      createdAt: '2025-01-02T03:04:05.000Z',
    });
    expect((await readdir(base)).sort()).toEqual([recordFile, 'ns1-data']);
  });

  it('is replaced by a rename of a new link, never rewritten in place', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1-data'), { owner, mode: 0o777 });

    expect(await root.releaseVolume(path('ns1-data'), { pvName: owner.pvName })).toBe('released');

    expect(JSON.parse(await readlink(join(base, recordFile))).releasedAt).toBeDefined();
    expect((await readdir(base)).sort()).toEqual([recordFile, 'ns1-data']);
  });
});

describe('a record stored as a regular file (the older format)', () => {
  it('is read as before', async () => {
    const root = await olderVolume(await tempDir());

    expect(await root.readRecord(path('ns1-data'))).toEqual({
      ...owner,
      createdAt: '2025-01-02T03:04:05.000Z',
    });
    expect(await root.createVolume(path('ns1-data'), { owner, mode: 0o777 })).toBe('reused');
  });

  it('becomes a symbolic link at the next change of the record', async () => {
    const base = await tempDir();
    const root = await olderVolume(base);

    expect(await root.releaseVolume(path('ns1-data'), { pvName: owner.pvName })).toBe('released');

    expect((await lstat(join(base, recordFile))).isSymbolicLink()).toBe(true);
    expect(await root.readRecord(path('ns1-data'))).toMatchObject({
      claimUid: 'u1',
      createdAt: '2025-01-02T03:04:05.000Z',
      releasedAt: expect.any(String),
    });
  });

  it('is deleted with its volume', async () => {
    const base = await tempDir();
    const root = await olderVolume(base);

    expect(await root.deleteVolume(path('ns1-data'), { pvName: owner.pvName })).toBe('deleted');

    expect(await readdir(base)).toEqual([]);
  });
});

describe('on a file system without symbolic links', () => {
  it('records are regular files, published whole by a link of a flushed temporary file', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base, { fs: withoutSymlinks });

    await root.createVolume(path('ns1-data'), { owner, mode: 0o777 });
    expect(await root.releaseVolume(path('ns1-data'), { pvName: owner.pvName })).toBe('released');

    expect((await lstat(join(base, recordFile))).isFile()).toBe(true);
    expect(JSON.parse(await readFile(join(base, recordFile), 'utf8'))).toMatchObject({
      claimUid: 'u1',
      releasedAt: expect.any(String),
    });
    expect((await readdir(base)).sort()).toEqual([recordFile, 'ns1-data']);
    expect(await root.deleteVolume(path('ns1-data'), { pvName: owner.pvName })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });

  it('a record already there still fails a create that would replace it', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base, { fs: withoutSymlinks });
    await root.createVolume(path('ns1-data'), { owner, mode: 0o777 });

    await expect(
      root.createVolume(path('ns1-data'), { owner: { ...owner, claimUid: 'u2' }, mode: 0o777 }),
    ).rejects.toMatchObject({ kind: 'ownership' });
    expect((await root.readRecord(path('ns1-data')))?.claimUid).toBe('u1');
  });
});
