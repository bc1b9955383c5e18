import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

/** The aftermath of the race before it was fixed: `o1` is team-b's volume and holds team-a's `o1/db`. */
async function nestedByTheOldRace(base: string): Promise<VolumeRoot> {
  const root = new VolumeRoot(base);
  await root.createVolume(path('o1/db'), { owner: ownerOf('team-a', 'inner', 'u-inner'), mode: 0o777 });
  await writeFile(join(base, 'o1/db/data'), 'team-a data');
  const record = { ...ownerOf('team-b', 'outer', 'u-outer'), createdAt: new Date().toISOString() };
  await writeFile(join(base, '.o1.kube-provisioner.json'), `${JSON.stringify(record)}\n`);
  return root;
}

describe('deleting a volume never removes another claim’s data', () => {
  it('refuses to delete a recorded volume that holds another volume, removing nothing', async () => {
    const base = await tempDir();
    const root = await nestedByTheOldRace(base);

    const err = await rejection(root.deleteVolume(path('o1'), { pvName: 'pvc-u-outer' }));

    expect(err.kind).toBe('ownership');
    expect(err.message).toContain("holds another volume's record or parent marker");
    expect(await readFile(join(base, 'o1/db/data'), 'utf8')).toBe('team-a data');
    expect(await root.readRecord(path('o1'))).toMatchObject({ claimUid: 'u-outer' });
  });

  it('refuses to archive a recorded volume that holds another volume, moving nothing', async () => {
    const base = await tempDir();
    const root = await nestedByTheOldRace(base);

    await expect(root.archiveVolume(path('o1'), { pvName: 'pvc-u-outer' })).rejects.toMatchObject({
      kind: 'ownership',
    });

    expect((await readdir(base)).sort()).toEqual(['.o1.kube-provisioner.json', 'o1']);
    expect(await readFile(join(base, 'o1/db/data'), 'utf8')).toBe('team-a data');
  });
});

describe('a create never takes a parent for a volume', () => {
  it('refuses to finish a volume whose directory turned out to be another claim’s parent', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    // A crashed create of `o1` left its record; meanwhile a nested create made `o1` its parent.
    await root.createVolume(path('x/db'), { owner: ownerOf('team-a', 'inner', 'u-inner'), mode: 0o777 });
    const record = { ...ownerOf('team-b', 'outer', 'u-outer'), createdAt: new Date().toISOString() };
    await writeFile(join(base, '.x.kube-provisioner.json'), `${JSON.stringify(record)}\n`);

    const err = await rejection(
      root.createVolume(path('x'), { owner: ownerOf('team-b', 'outer', 'u-outer'), mode: 0o777 }),
    );

    expect(err.message).toContain('is a parent directory of other volumes');
    expect((await stat(join(base, 'x'))).mode & 0o7777).toBe(0o755);
  });

  it('refuses a volume mode that marks parents in progress', async () => {
    const base = await tempDir();
    await expect(
      new VolumeRoot(base).createVolume(path('v'), { owner: ownerOf('ns', 'v', 'u1'), mode: 0o1700 }),
    ).rejects.toThrow(/reserved/);
    expect(await readdir(base)).toEqual([]);
  });

  it('keeps a parent whose removal lost to a create, with its marker and mode back', async () => {
    const base = await tempDir();
    await new VolumeRoot(base).createVolume(path('ns/a'), { owner: ownerOf('ns', 'a', 'u1'), mode: 0o777 });
    let raced = false;
    const fs: FsOps = {
      ...nodeFsOps,
      rmdir: async (target) => {
        if (!raced && String(target).endsWith('/ns')) {
          raced = true;
          // A create of `ns/b` opened `ns` before its marker went and puts its volume in now.
          await mkdir(join(base, 'ns/b'));
        }
        return nodeFsOps.rmdir(target);
      },
    };

    await new VolumeRoot(base, { fs }).deleteVolume(path('ns/a'), { pvName: 'pvc-u1' });

    expect(raced).toBe(true);
    expect((await readdir(join(base, 'ns'))).sort()).toEqual(['.kube-provisioner-parent.json', 'b']);
    expect((await stat(join(base, 'ns'))).mode & 0o7777).toBe(0o755);
  });
});

describe('hostPath-style roots place volumes only below their own parents', () => {
  it('refuses a volume below a directory this package did not make, and creates it below its own', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'legacy-app'));
    const root = new VolumeRoot(base);
    const options = { owner: ownerOf('ns', 'x', 'u1'), mode: 0o777, ownParentsOnly: true };

    const err = await rejection(root.createVolume(path('legacy-app/x'), options));

    expect(err.message).toContain('was not made by this provisioner as a parent');
    expect(await readdir(join(base, 'legacy-app'))).toEqual([]);
    expect(await root.createVolume(path('ours/x'), options)).toBe('created');
    expect(await root.createVolume(path('ours/y'), { ...options, owner: ownerOf('ns', 'y', 'u2') })).toBe(
      'created',
    );
  });
});

describe('adoption stays inside the namespace', () => {
  const adopting = (namespace: string, name: string, extra: object = {}) => ({
    owner: ownerOf(namespace, name, `u-${name}`),
    mode: 0o777,
    adopt: true,
    namespaceScopedPath: true,
    ...extra,
  });

  it('refuses a nested path whose first segment only starts with the namespace', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'team-a-b/y'), { recursive: true });
    await writeFile(join(base, 'team-a-b/y/secret'), 'team-a-b data');

    const err = await rejection(
      new VolumeRoot(base).createVolume(
        path('team-a-b/y'),
        adopting('team-a', 'grab', { adoptAmbiguousNamespacePrefix: true }),
      ),
    );

    expect(err.message).toContain('adoption is limited to data of namespace "team-a"');
    expect(await readdir(join(base, 'team-a-b'))).toEqual(['y']);
  });

  it('refuses a flat name starting with the namespace unless the class accepts the ambiguity', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'payments-staging-db'));
    const root = new VolumeRoot(base);

    const err = await rejection(
      root.createVolume(path('payments-staging-db'), adopting('payments', 'staging-db')),
    );

    expect(err.message).toContain('when the class accepts that this prefix is ambiguous');
    expect(
      await root.createVolume(
        path('payments-staging-db'),
        adopting('payments', 'staging-db', { adoptAmbiguousNamespacePrefix: true }),
      ),
    ).toBe('adopted');
  });

  it('refuses to adopt a directory holding an upstream provisioner’s nested volume', async () => {
    const base = await tempDir();
    const nested = 'ns-l/x/ns-l-y-pvc-0b5e5b3c-5d3b-4c1e-9a55-0c6f3c2d9e11';
    await mkdir(join(base, nested), { recursive: true });
    await writeFile(join(base, nested, 'data'), 'another claim');

    const err = await rejection(new VolumeRoot(base).createVolume(path('ns-l/x'), adopting('ns-l', 'x')));

    expect(err.message).toContain('refusing to adopt it');
    expect(await readFile(join(base, nested, 'data'), 'utf8')).toBe('another claim');
  });
});
