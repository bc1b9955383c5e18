import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

describe('adopting existing data', () => {
  it("adopts unrecorded data below the claim's namespace, keeping its content and mode", async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1/data'), { recursive: true, mode: 0o750 });
    await writeFile(join(base, 'ns1/data/file'), 'kept');
    const root = new VolumeRoot(base);
    const owner = ownerOf('ns1', 'data', 'u1');

    expect(
      await root.createVolume(path('ns1/data'), {
        owner,
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    ).toBe('adopted');

    expect((await root.readRecord(path('ns1/data')))?.claimUid).toBe('u1');
    expect(await readFile(join(base, 'ns1/data/file'), 'utf8')).toBe('kept');
    expect((await stat(join(base, 'ns1/data'))).mode & 0o7777).toBe(0o750);
  });

  it('refuses unrecorded data whose first segment is not the namespace or a flat name of it', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns2/data'), { recursive: true });
    await mkdir(join(base, 'ns2-data'));
    await mkdir(join(base, 'ns1data'));
    const root = new VolumeRoot(base);
    const owner = ownerOf('ns1', 'data', 'u1');

    for (const target of ['ns2/data', 'ns2-data', 'ns1data']) {
      const err = await rejection(
        root.createVolume(path(target), { owner, mode: 0o777, adopt: true, namespaceScopedPath: true }),
      );
      expect(err.kind).toBe('ownership');
      expect(err.message).toContain('adoption is limited to data of namespace "ns1"');
      expect(await root.readRecord(path(target))).toBeUndefined();
    }
  });

  it("adopts a flat unrecorded path when the caller vouches it is the namespace's, holding nothing of ours", async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1-data'));
    await writeFile(join(base, 'ns1-data/file'), 'kept');
    const root = new VolumeRoot(base);
    const owner = ownerOf('ns1', 'data', 'u1');
    const options = {
      owner,
      mode: 0o777,
      adopt: true,
      namespaceScopedPath: true,
      adoptAmbiguousNamespacePrefix: true,
    };

    expect(await root.createVolume(path('ns1-data'), options)).toBe('adopted');
    expect(await readFile(join(base, 'ns1-data/file'), 'utf8')).toBe('kept');

    await mkdir(join(base, 'ns1-host'));
    await root.createVolume(path('ns1-host/inner'), { owner: ownerOf('ns1', 'inner', 'u2'), mode: 0o777 });
    const err = await rejection(root.createVolume(path('ns1-host'), options));
    expect(err.message).toContain('is a parent directory of other volumes');
  });

  it('refuses unrecorded data when the path is not scoped to the namespace by the pattern (shared/team-b-db for namespace shared)', async () => {
    // pathPattern `shared/${.PVC.annotations.dir}`: namespace "shared" can render any team's path.
    const base = await tempDir();
    await mkdir(join(base, 'shared/team-b-db'), { recursive: true });
    await writeFile(join(base, 'shared/team-b-db/file'), 'team-b data');
    const root = new VolumeRoot(base);

    const err = await rejection(
      root.createVolume(path('shared/team-b-db'), {
        owner: ownerOf('shared', 'grab', 'u1'),
        mode: 0o777,
        adopt: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('starts with the namespace');
    expect(await root.readRecord(path('shared/team-b-db'))).toBeUndefined();
  });

  it('refuses recorded data of another namespace without naming it', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns2', 'secret', 'u2'), mode: 0o700 });

    const err = await rejection(
      root.createVolume(path('data'), {
        owner: ownerOf('ns1', 'data', 'u1'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('adoption is limited to data of namespace "ns1"');
    expect(err.message).not.toMatch(/ns2|secret/);
    expect((await root.readRecord(path('data')))?.claimUid).toBe('u2');
  });

  it('refuses a live volume of another claim in the same namespace, so its own PV can still delete it', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const first = ownerOf('ns1', 'original', 'old');
    await root.createVolume(path('ns1/data'), { owner: first, mode: 0o750 });

    const err = await rejection(
      root.createVolume(path('ns1/data'), {
        owner: ownerOf('ns1', 'copy', 'new'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('only released or unrecorded data can be adopted');
    expect(err.message).not.toMatch(/original|old/);
    expect((await root.readRecord(path('ns1/data')))?.claimUid).toBe('old');
    expect(await root.deleteVolume(path('ns1/data'), { pvName: first.pvName })).toBe('deleted');
  });

  it("refuses a parent made for another namespace's volume, which would expose its data and record", async () => {
    // pathPattern `${.PVC.annotations.x}`: a team-b claim renders team-a/x/y, a team-a claim team-a/x.
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const victim = ownerOf('team-b', 'db', 'u2');
    await root.createVolume(path('team-a/x/y'), { owner: victim, mode: 0o777 });
    await writeFile(join(base, 'team-a/x/y/secret'), 'team-b data');

    const err = await rejection(
      root.createVolume(path('team-a/x'), {
        owner: ownerOf('team-a', 'grab', 'u1'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('is a parent directory of other volumes');
    expect(err.message).not.toMatch(/\.y\.|secret/);
    expect(await root.readRecord(path('team-a/x'))).toBeUndefined();
    expect(await root.readRecord(path('team-a/x/y'))).toMatchObject({ claimUid: 'u2' });
    expect(await readFile(join(base, 'team-a/x/y/secret'), 'utf8')).toBe('team-b data');
  });

  it('refuses an empty parent this package made, marker and all', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await mkdir(join(base, 'ns1/parent'), { recursive: true });
    await writeFile(join(base, 'ns1/parent/.kube-provisioner-parent.json'), '{}\n');

    const err = await rejection(
      root.createVolume(path('ns1/parent'), {
        owner: ownerOf('ns1', 'p', 'u1'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(await readdir(join(base, 'ns1'))).toEqual(['parent']);
  });

  it('refuses unrecorded legacy data that has come to hold a volume of this package', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await mkdir(join(base, 'ns1/legacy'), { recursive: true });
    await root.createVolume(path('ns1/legacy/deep/db'), { owner: ownerOf('ns1', 'db', 'u2'), mode: 0o777 });

    const err = await rejection(
      root.createVolume(path('ns1/legacy'), {
        owner: ownerOf('ns1', 'old', 'u1'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(await root.readRecord(path('ns1/legacy'))).toBeUndefined();
  });

  it('never replaces a record another claim publishes while the data is being adopted', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1/data'), { recursive: true });
    const racer = ownerOf('ns1', 'racer', 'u2');
    const fs: FsOps = {
      ...nodeFsOps,
      symlink: async (text, target) => {
        if (String(target).endsWith('/.data.kube-provisioner.json')) {
          await writeFile(
            join(base, 'ns1/.data.kube-provisioner.json'),
            JSON.stringify({ ...racer, createdAt: '' }),
          );
        }
        return nodeFsOps.symlink(text, target);
      },
    };
    const root = new VolumeRoot(base, { fs });

    const err = await rejection(
      root.createVolume(path('ns1/data'), {
        owner: ownerOf('ns1', 'data', 'u1'),
        mode: 0o777,
        adopt: true,
        namespaceScopedPath: true,
      }),
    );

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain('concurrently');
    expect((await root.readRecord(path('ns1/data')))?.claimUid).toBe('u2');
    expect(await readdir(join(base, 'ns1/data'))).toEqual([]);
  });
});
