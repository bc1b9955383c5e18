import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
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

  it('refuses a parent this package created, which is no volume', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('team-a/db'), { owner: ownerOf('team-a', 'db', 'u1'), mode: 0o777 });
    await expect(root.deleteVolume(path('team-a'), { pvName: 'pvc-forged' })).rejects.toMatchObject({
      kind: 'ownership',
    });
    expect(await readdir(join(base, 'team-a'))).toContain('db');
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
