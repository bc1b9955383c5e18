import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestDifferences, readRecord, treeDigest, writeTree } from '../src/volume-files.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chaos-volume-files-'));
  dirs.push(dir);
  return dir;
}

describe('volume files', () => {
  it('finds a faithful copy of a written tree identical, and names each missing, extra and changed file', async () => {
    const root = await tempDir();
    const source = join(root, 'source');
    const copy = join(root, 'copy');
    await writeTree(source, 250, 'uid-1');
    await cp(source, copy, { recursive: true });
    const sourceDigest = await treeDigest(source);
    expect(sourceDigest.size).toBe(253);
    expect(digestDifferences(sourceDigest, await treeDigest(copy))).toEqual([]);

    await rm(join(copy, 'd0', 'f1.txt'));
    await writeFile(join(copy, 'd2', 'f200.txt'), 'changed');
    await writeFile(join(copy, 'd1', 'stray.txt'), '');
    expect(digestDifferences(sourceDigest, await treeDigest(copy)).sort()).toEqual([
      'd0/f1.txt missing',
      'd1/stray.txt extra',
      'd2/f200.txt differs',
    ]);
  });

  it('reads the ownership record beside a volume directory, a link or an older file, and nothing where there is none', async () => {
    const root = await tempDir();
    const record = (pvName: string) =>
      JSON.stringify({
        pvName,
        archivedAt: '2026-01-01T00:00:00.000Z',
        expiresAt: '2026-01-01T00:00:15.000Z',
      });
    // What the provisioners write: a symbolic link whose target is the record.
    await symlink(record('pv-a'), join(root, '.archived-a.kube-provisioner.json'));
    await writeFile(join(root, '.archived-c.kube-provisioner.json'), record('pv-c'));
    expect(await readRecord(join(root, 'archived-a'))).toMatchObject({
      pvName: 'pv-a',
      expiresAt: '2026-01-01T00:00:15.000Z',
    });
    expect(await readRecord(join(root, 'archived-c'))).toMatchObject({ pvName: 'pv-c' });
    expect(await readRecord(join(root, 'archived-b'))).toBeUndefined();
  });
});
