import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { parentMarkerName } from '../src/reserved-names.ts';
import { treeSnapshot as tree } from '../src/testing/tree-snapshot.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

describe('unrecorded directories holding volumes of this package', () => {
  it.each([
    ['team-a', 'team-a/db'],
    ['team-a', 'team-a/x/db'],
  ])(
    'refuses to delete or archive legacy volume %s that now hosts %s, touching nothing',
    async (legacy, nested) => {
      const base = await tempDir();
      await mkdir(join(base, legacy));
      await writeFile(join(base, legacy, 'legacy.txt'), 'upstream data');
      const root = new VolumeRoot(base);
      await root.createVolume(path(nested), { owner: ownerOf('team-a', 'db', 'u1'), mode: 0o777 });
      await writeFile(join(base, nested, 'new.txt'), 'our data');

      await expect(root.deleteVolume(path(legacy), { pvName: 'pvc-legacy' })).rejects.toMatchObject({
        kind: 'ownership',
        message: expect.stringContaining("holds another volume's record or parent marker"),
      });
      await expect(root.archiveVolume(path(legacy), { pvName: 'pvc-legacy' })).rejects.toMatchObject({
        kind: 'ownership',
      });
      expect(await readdir(join(base, nested))).toEqual(['new.txt']);
      expect(await readdir(base)).toEqual([legacy]);
    },
  );

  it('finds no volume at a parent this package created, and touches nothing in it', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('team-a/db'), { owner: ownerOf('team-a', 'db', 'u1'), mode: 0o777 });
    await writeFile(join(base, 'team-a/db/data'), 'our data');
    const before = await tree(base);

    expect(await root.deleteVolume(path('team-a'), { pvName: 'pvc-forged' })).toBe('missing');
    expect(await root.archiveVolume(path('team-a'), { pvName: 'pvc-forged' })).toEqual({
      outcome: 'missing',
    });
    expect(await tree(base)).toEqual(before);
  });

  it('lets a deleted volume’s PV go once a nested claim made its name a parent, keeping that claim’s data', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    // The outer volume was removed, its PV not yet deleted (the leader died); then the inner claim,
    // refused while the outer existed, made `n0` its parent.
    await root.createVolume(path('n0'), { owner: ownerOf('team-b', 'outer', 'u-outer'), mode: 0o777 });
    expect(await root.deleteVolume(path('n0'), { pvName: 'pvc-u-outer' })).toBe('deleted');
    await root.createVolume(path('n0/db'), { owner: ownerOf('team-a', 'db', 'u-inner'), mode: 0o777 });
    await writeFile(join(base, 'n0/db/data'), 'team-a data');
    const before = await tree(base);

    // The successor retries the outer PV's delete.
    expect(await root.deleteVolume(path('n0'), { pvName: 'pvc-u-outer' })).toBe('missing');
    expect(await tree(base)).toEqual(before);
    expect(await readFile(join(base, 'n0/db/data'), 'utf8')).toBe('team-a data');
  });

  it('deletes a legacy volume whose tenant set the mode that marks a parent in the making', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'team-a-db', 'sub'), { recursive: true });
    await writeFile(join(base, 'team-a-db', 'sub', 'f'), 'tenant data');
    await chmod(join(base, 'team-a-db'), 0o1700);

    expect(await new VolumeRoot(base).deleteVolume(path('team-a-db'), { pvName: 'pvc-1' })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });

  it.each([
    ['at its top', ''],
    ['in every directory, its files one level down', 'sub/'],
  ])('does not take a legacy volume with a parent marker planted %s for a parent', async (_, where) => {
    const base = await tempDir();
    const volume = join(base, 'team-a-db');
    await mkdir(join(volume, where), { recursive: true });
    await writeFile(join(volume, parentMarkerName), '{}');
    if (where !== '') await writeFile(join(volume, where, parentMarkerName), '{}');
    await writeFile(join(volume, where, 'f'), 'tenant data');
    const root = new VolumeRoot(base);

    // The delete cannot tell a forged marker from another volume's, so it refuses loudly (an event,
    // retried) instead of reporting the volume missing and leaving its data behind in silence.
    await expect(root.deleteVolume(path('team-a-db'), { pvName: 'pvc-1' })).rejects.toMatchObject({
      kind: 'ownership',
    });
    await expect(root.archiveVolume(path('team-a-db'), { pvName: 'pvc-1' })).rejects.toMatchObject({
      kind: 'ownership',
    });
  });

  it('still deletes a plain legacy volume', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'team-a-db-pvc-1', 'sub'), { recursive: true });
    await writeFile(join(base, 'team-a-db-pvc-1', 'sub', 'f'), 'x');
    expect(await new VolumeRoot(base).deleteVolume(path('team-a-db-pvc-1'), { pvName: 'pvc-1' })).toBe(
      'deleted',
    );
    expect(await readdir(base)).toEqual([]);
  });
});
