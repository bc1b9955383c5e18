import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localFsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

describe.each([
  { table: 'nodeFsOps', fs: nodeFsOps },
  { table: 'localFsOps', fs: localFsOps },
])('the $table call table', ({ fs }) => {
  it('answers a missing entry as absent: lstat resolves nothing or rejects with ENOENT, never another error', async () => {
    const base = await tempDir();
    const stats = await fs.lstat(join(base, 'missing')).catch((err: NodeJS.ErrnoException) => err.code);
    expect([undefined, 'ENOENT']).toContain(stats);
    expect((await fs.lstat(base))?.isDirectory()).toBe(true);
  });

  it('creates, finds again, reads the owner of and deletes a volume whose levels and records were all missing', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base, { fs });
    const owner = ownerOf('ns1', 'data', 'u1');
    const path = parseRelativeVolumePath('ns1/data');
    expect(await root.readRecord(path)).toBeUndefined();
    expect(await root.createVolume(path, { owner, mode: 0o770 })).toBe('created');
    expect(await root.createVolume(path, { owner, mode: 0o770 })).toBe('reused');
    expect(await root.readRecord(path)).toMatchObject({ claimUid: 'u1', pvName: owner.pvName });
    expect(await root.deleteVolume(path, { pvName: owner.pvName })).toBe('deleted');
    // The parent this package made goes with its last volume.
    expect(await readdir(base)).toEqual([]);
  });
});
