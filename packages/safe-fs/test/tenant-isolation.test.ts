import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FsFile } from '../src/fs-ops.ts';
import {
  type FsOps,
  nodeFsOps,
  parseRelativeVolumePath,
  relativePathUnder,
  VolumeRoot,
} from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const uuid = '0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f';

describe('a PV path inside another volume', () => {
  it.each(['delete', 'archive'] as const)('is refused by %s, leaving the other volume whole', async (how) => {
    // nfs.path: $NFS_PATH/team-victim/db/sub, written by hand into a PV with policy delete.
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('team-victim/db'), {
      owner: ownerOf('team-victim', 'db', 'u1'),
      mode: 0o777,
    });
    await mkdir(join(base, 'team-victim/db/sub'));
    await writeFile(join(base, 'team-victim/db/sub/table'), 'victim data');

    const remove = how === 'delete' ? root.deleteVolume.bind(root) : root.archiveVolume.bind(root);
    await expect(remove(path('team-victim/db/sub'), { pvName: 'pvc-attacker' })).rejects.toMatchObject({
      kind: 'ownership',
      path: 'team-victim/db',
      message: expect.stringContaining('is a volume itself'),
    });
    expect(await readFile(join(base, 'team-victim/db/sub/table'), 'utf8')).toBe('victim data');
  });
});

describe('a new volume inside an unrecorded directory named like a volume', () => {
  it.each(['pvc-legacy', `team-a-db-pvc-${uuid}`, 'archived-team-a-db'])(
    'is refused inside %s unless adoption says so',
    async (legacy) => {
      const base = await tempDir();
      await mkdir(join(base, legacy));
      await writeFile(join(base, legacy, 'data'), 'legacy data');
      const root = new VolumeRoot(base);
      const owner = ownerOf(legacy, 'x', 'u1');

      await expect(root.createVolume(path(`${legacy}/x`), { owner, mode: 0o777 })).rejects.toMatchObject({
        kind: 'ownership',
        path: legacy,
        message: expect.stringContaining('named like a volume'),
      });
      expect(await readdir(join(base, legacy))).toEqual(['data']);

      const adopt = { owner, mode: 0o777, adopt: true, namespaceScopedPath: true };
      expect(await root.createVolume(path(`${legacy}/x`), adopt)).toBe('created');
    },
  );

  it("still nests volumes in parents this package made, whatever they're called", async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path(`pvc-${uuid}/a`), { owner: ownerOf('ns', 'a', 'u1'), mode: 0o777 });
    expect(
      await root.createVolume(path(`pvc-${uuid}/b`), { owner: ownerOf('ns', 'b', 'u2'), mode: 0o777 }),
    ).toBe('created');
  });
});

describe('directory names of 233 to 255 bytes (upstream <ns>-<pvc>-<pv> with long names)', () => {
  it.each([233, 255])('are created, recorded, released, archived and deleted at %i bytes', async (bytes) => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const leaf = `ns-${'x'.repeat(bytes - 3 - 41)}-pvc-${uuid}`;
    expect(Buffer.byteLength(leaf)).toBe(bytes);
    const owner = ownerOf('ns', 'x', 'u1');

    expect(await root.createVolume(path(leaf), { owner, mode: 0o777 })).toBe('created');
    expect(await root.createVolume(path(leaf), { owner, mode: 0o777 })).toBe('reused');
    expect(await root.readRecord(path(leaf))).toMatchObject({ claimUid: 'u1', volume: leaf });
    for (const name of await readdir(base)) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    expect(await root.releaseVolume(path(leaf), { pvName: 'pvc-u1' })).toBe('released');
    const archived = await root.archiveVolume(path(leaf), { pvName: 'pvc-u1' });
    expect(archived.outcome).toBe('archived');
    if (archived.outcome === 'archived') {
      expect((await root.readRecord(archived.archivedPath))?.claimUid).toBe('u1');
      expect(await root.deleteVolume(archived.archivedPath, { pvName: 'pvc-u1' })).toBe('deleted');
    }
    expect(await readdir(base)).toEqual([]);
  });

  it('cannot be claimed through a short name spelling out the hash of the long one', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const long = 'y'.repeat(250);
    await root.createVolume(path(long), { owner: ownerOf('victim', 'db', 'u1'), mode: 0o777 });
    const [record] = (await readdir(base)).filter((name) => name.endsWith('.json'));
    const spelled = record?.slice(1, -'.json'.length) ?? '';

    await root.createVolume(path(spelled.replace(/^kube-provisioner\./u, '')), {
      owner: ownerOf('thief', 'x', 'u2'),
      mode: 0o777,
    });

    expect((await root.readRecord(path(long)))?.claimUid).toBe('u1');
  });
});

describe('names that are not UTF-8', () => {
  it('do not make a volume undeletable', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    const volume = Buffer.from(join(base, 'data/'));
    const bad = Buffer.from([0x66, 0xff, 0xfe, 0x2e]);
    await writeFile(Buffer.concat([volume, bad]), 'x');
    await mkdir(Buffer.concat([volume, Buffer.from('d'), bad]));
    await writeFile(Buffer.concat([volume, Buffer.from('d'), bad, Buffer.from('/'), bad]), 'y');

    expect(await root.deleteVolume(path('data'), { pvName: 'pvc-u1' })).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
  });
});

describe('the directory opened after mkdir', () => {
  it("is checked to be the one made: another tenant's directory swapped in is neither chmodded nor handed out", async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1'));
    await mkdir(join(base, 'ns1/victim'), { mode: 0o700 });
    await writeFile(join(base, 'ns1/victim/secret'), 'victim data');
    const swapping: FsOps = {
      ...nodeFsOps,
      mkdir: async (target, mode) => {
        await nodeFsOps.mkdir(target, mode);
        if (String(target).endsWith('/data')) {
          await rename(join(base, 'ns1/data'), join(base, 'ns1/moved'));
          await rename(join(base, 'ns1/victim'), join(base, 'ns1/data'));
        }
      },
    };

    await expect(
      new VolumeRoot(base, { fs: swapping }).createVolume(path('ns1/data'), {
        owner: ownerOf('ns1', 'data', 'u1'),
        mode: 0o777,
      }),
    ).rejects.toMatchObject({ kind: 'ownership', message: expect.stringContaining('was replaced') });
    expect((await stat(join(base, 'ns1/data'))).mode & 0o777).toBe(0o700);
    expect(await readFile(join(base, 'ns1/data/secret'), 'utf8')).toBe('victim data');
  });
});

describe('lesser holes', () => {
  it('closes the new parent when writing its marker fails', async () => {
    const base = await tempDir();
    const handles: FsFile[] = [];
    const fs: FsOps = {
      ...nodeFsOps,
      open: async (target, flags, mode) => {
        if (String(target).endsWith('/.kube-provisioner-parent.json')) throw systemErrorOf('EIO', -5, 'open');
        const handle = await nodeFsOps.open(target, flags, mode);
        handles.push(handle);
        return handle;
      },
    };

    await expect(
      new VolumeRoot(base, { fs }).createVolume(path('ns1/data'), {
        owner: ownerOf('ns1', 'd', 'u1'),
        mode: 0o777,
      }),
    ).rejects.toThrow('EIO');

    expect(handles.length).toBeGreaterThan(1);
    expect(handles.filter((handle) => handle.fd !== -1)).toEqual([]);
    expect(await readdir(base)).toEqual([]);
  });

  it.each(['.DATA.KUBE-PROVISIONER.JSON', '.x.Kube-Provisioner.lock', 'ns/.Kube-Provisioner-Parent.json'])(
    'refuses reserved name %s in any case',
    (name) => {
      expect(() => path(name)).toThrow('reserved');
    },
  );

  it.each([
    ['zero width space', 'team\u200Ba'],
    ['zero width joiner', 'a\u200Db'],
    ['right-to-left override', 'db\u202Egpj.exe'],
    ['first strong isolate', 'ns/\u2068x'],
    ['byte order mark', '\uFEFFdata'],
    ['line separator', 'a\u2028b'],
  ])('refuses a %s in names', (_what, name) => {
    expect(() => path(name)).toThrow('invisible or bidirectional');
  });

  it('gives a clear error for a PV without a path', () => {
    expect(() => relativePathUnder('/export', undefined as unknown as string)).toThrow(
      expect.objectContaining({ kind: 'invalid-path', message: expect.stringContaining('has no path') }),
    );
  });

  it('deletes a tree deeper than its descriptor bound, holding a bounded number open', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    let deep = join(base, 'data');
    for (let level = 0; level < 120; level++) deep = join(deep, 'd');
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'leaf'), 'x');
    let open = 0;
    let most = 0;
    const counting: FsOps = {
      ...nodeFsOps,
      open: async (target, flags, mode) => {
        const handle = await nodeFsOps.open(target, flags, mode);
        most = Math.max(most, ++open);
        const close = handle.close.bind(handle);
        handle.close = async () => {
          open--;
          await close();
        };
        return handle;
      },
    };

    expect(
      await new VolumeRoot(base, { fs: counting }).deleteVolume(path('data'), { pvName: 'pvc-u1' }),
    ).toBe('deleted');
    expect(await readdir(base)).toEqual([]);
    expect(most).toBeLessThanOrEqual(40);
  });
});
