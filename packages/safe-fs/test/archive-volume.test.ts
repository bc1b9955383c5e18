import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSafeFsError, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

describe('archiveVolume', () => {
  it('keeps the nfs-client name for a top-level directory that contains the PV name', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1-data-pvc-u1'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
    await writeFile(join(base, 'ns1-data-pvc-u1/file'), 'kept');

    const result = await root.archiveVolume(path('ns1-data-pvc-u1'), { pvName: 'pvc-u1' });

    expect(result).toEqual({ outcome: 'archived', archivedPath: 'archived-ns1-data-pvc-u1' });
    expect(await readFile(join(base, 'archived-ns1-data-pvc-u1/file'), 'utf8')).toBe('kept');
    expect((await root.readRecord(path('archived-ns1-data-pvc-u1')))?.claimUid).toBe('u1');
    expect((await readdir(base)).sort()).toEqual([
      '.archived-ns1-data-pvc-u1.kube-provisioner.json',
      'archived-ns1-data-pvc-u1',
    ]);
  });

  it("archives same-named leaves side by side, under upstream's archived-<leaf> unless it is taken", async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const claims = [
      { dir: 'ns1/data', owner: ownerOf('ns1', 'data', 'u1') },
      { dir: 'ns2/data', owner: ownerOf('ns2', 'data', 'u2') },
      { dir: 'ns1/data', owner: ownerOf('ns1', 'data', 'u3') },
    ];
    const archived: string[] = [];
    for (const { dir, owner } of claims) {
      await root.createVolume(path(dir), { owner, mode: 0o777 });
      await writeFile(join(base, dir, 'owner'), owner.claimUid);
      const result = await root.archiveVolume(path(dir), { pvName: owner.pvName });
      if (result.outcome !== 'archived') throw new Error('not archived');
      archived.push(result.archivedPath);
    }

    expect(archived).toEqual(['ns1/archived-data', 'ns2/archived-data', 'ns1/archived-data-pvc-u3']);
    for (const [index, { owner }] of claims.entries()) {
      expect(await readFile(join(base, archived[index] ?? '', 'owner'), 'utf8')).toBe(owner.claimUid);
    }
  });

  it('never replaces an existing entry, even an empty directory or a bare record', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    await mkdir(join(base, 'archived-data'));
    await mkdir(join(base, 'archived-data-pvc-u1'));
    await writeFile(join(base, '.archived-data-pvc-u1-2.kube-provisioner.json'), 'foreign');

    const result = await root.archiveVolume(path('data'), { pvName: 'pvc-u1' });

    expect(result).toEqual({ outcome: 'archived', archivedPath: 'archived-data-pvc-u1-3' });
    expect(await readdir(join(base, 'archived-data'))).toEqual([]);
    expect(await readdir(join(base, 'archived-data-pvc-u1'))).toEqual([]);
    expect(await readFile(join(base, '.archived-data-pvc-u1-2.kube-provisioner.json'), 'utf8')).toBe(
      'foreign',
    );
    await expect(lstat(join(base, 'archived-data-pvc-u1-2'))).rejects.toThrow('ENOENT');
  });

  it('shortens a long leaf but keeps the PV name in the archive name', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const leaf = 'l'.repeat(230);
    await root.createVolume(path(leaf), { owner: ownerOf('ns', 'x', 'u1'), mode: 0o777 });

    const result = await root.archiveVolume(path(leaf), { pvName: 'pvc-u1' });

    if (result.outcome !== 'archived') throw new Error('not archived');
    expect(result.archivedPath.startsWith('archived-lll')).toBe(true);
    expect(result.archivedPath.endsWith('-pvc-u1')).toBe(true);
    expect(Buffer.byteLength(`.${result.archivedPath}.kube-provisioner.json`)).toBeLessThanOrEqual(255);
  });

  it('reports a missing volume and removes its leftover record and empty parents', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
    await root.deleteVolume(path('ns1/data'), { pvName: 'pvc-u1' });

    expect(await root.archiveVolume(path('ns1/data'), { pvName: 'pvc-u1' })).toEqual({ outcome: 'missing' });
    expect(await readdir(base)).toEqual([]);
  });

  it('refuses a volume recorded for another PV, and a volume that is a symlink', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('theirs'), { owner: ownerOf('ns2', 'theirs', 'u2'), mode: 0o777 });
    await symlink(outside, join(base, 'link'));

    const foreign = await root.archiveVolume(path('theirs'), { pvName: 'pvc-u1' }).catch((e: unknown) => e);
    const linked = await root.archiveVolume(path('link'), { pvName: 'pvc-u1' }).catch((e: unknown) => e);

    expect(isSafeFsError(foreign) && foreign.kind === 'ownership').toBe(true);
    expect(isSafeFsError(linked) && linked.kind === 'symlink').toBe(true);
    expect((await readdir(base)).sort()).toEqual(['.theirs.kube-provisioner.json', 'link', 'theirs']);
  });
});

describe('archiveVolume after a kill', () => {
  it('run again after a kill at any step, archives to the same name with the data, leaving nothing else', async () => {
    let stoppedMidway = 0;
    for (let stopAt = 0; stopAt < 12; stopAt++) {
      const base = await tempDir();
      const root = new VolumeRoot(base);
      await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 });
      await writeFile(join(base, 'ns1/data/file'), 'kept');
      let writes = 0;
      const killed = await root
        .archiveVolume(path('ns1/data'), {
          pvName: 'pvc-u1',
          beforeEachWrite: () => {
            if (writes++ >= stopAt) throw new Error('killed');
          },
        })
        .then(
          () => false,
          () => true,
        );
      if (killed && (await readdir(join(base, 'ns1'))).some((name) => name.startsWith('archived-'))) {
        stoppedMidway++;
      }

      await root.archiveVolume(path('ns1/data'), { pvName: 'pvc-u1' });

      expect(await readFile(join(base, 'ns1/archived-data/file'), 'utf8')).toBe('kept');
      expect((await root.readRecord(path('ns1/archived-data')))?.claimUid).toBe('u1');
      expect((await readdir(join(base, 'ns1'))).sort()).toEqual([
        '.archived-data.kube-provisioner.json',
        '.kube-provisioner-parent.json',
        'archived-data',
      ]);
    }
    expect(stoppedMidway).toBeGreaterThan(1);
  });
});
