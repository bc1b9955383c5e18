import { readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath as path, VolumeRoot } from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

describe('project IDs in ownership records', () => {
  it('are recorded with the owner, read back, and found by a search of the records below the base', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/team/data'), {
      owner: { ...ownerOf('ns1', 'data', 'u1'), projectId: 7 },
      mode: 0o777,
    });
    await root.createVolume(path('plain'), { owner: ownerOf('ns1', 'plain', 'u2'), mode: 0o777 });

    expect((await root.readRecord(path('ns1/team/data')))?.projectId).toBe(7);
    expect(JSON.parse(await readlink(join(base, 'ns1/team/.data.kube-provisioner.json')))).toMatchObject({
      projectId: 7,
    });
    const found = await root.recordedVolumes((record) => record.projectId !== undefined);
    expect(found.map(({ path: volume, record }) => [volume, record.projectId])).toEqual([
      ['ns1/team/data', 7],
    ]);
    expect((await root.recordedVolumes()).map(({ path: volume }) => volume).sort()).toEqual([
      'ns1/team/data',
      'plain',
    ]);
  });

  it.each([['"7"'], ['0'], ['1.5'], ['4294967295']])(
    'refuses a record whose projectId is %s',
    async (value) => {
      const base = await tempDir();
      const root = new VolumeRoot(base);
      await root.createVolume(path('data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
      const file = join(base, '.data.kube-provisioner.json');
      const record = JSON.parse(await readlink(file)) as Record<string, unknown>;
      // Rewritten as a regular file, the older format, which is read the same way.
      await rm(file);
      await writeFile(file, `${JSON.stringify(record).slice(0, -1)},"projectId":${value}}`);

      await expect(root.readRecord(path('data'))).rejects.toThrow(
        /"projectId" field that is not an integer from 1 to 4294967294/u,
      );
    },
  );
});
