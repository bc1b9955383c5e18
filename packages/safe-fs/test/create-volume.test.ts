import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type FsOps,
  isPermissionError,
  isSafeFsError,
  nodeFsOps,
  parseRelativeVolumePath,
  type SafeFsError,
  VolumeRoot,
} from '../src/index.ts';
import { ownerOf, systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

async function modeOf(file: string): Promise<number> {
  return (await stat(file)).mode & 0o7777;
}

async function rejection(promise: Promise<unknown>): Promise<SafeFsError> {
  const err = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isSafeFsError(err)) throw new Error(`expected a SafeFsError, got ${String(err)}`);
  return err;
}

describe('createVolume', () => {
  it('creates every missing level, parents 0755 as upstream and the volume with the configured mode, and records the owner beside the volume', async () => {
    const base = await tempDir();
    const now = Date.parse('2025-01-02T03:04:05.000Z');
    const root = new VolumeRoot(base, { now: () => now });
    const owner = ownerOf('ns1', 'data', 'u1');

    const outcome = await root.createVolume(path('ns1/team/data'), { owner, mode: 0o2775 });

    expect(outcome).toBe('created');
    for (const level of ['ns1', 'ns1/team']) expect(await modeOf(join(base, level)), level).toBe(0o755);
    expect(await modeOf(join(base, 'ns1/team/data'))).toBe(0o2775);
    expect(await readdir(join(base, 'ns1/team/data'))).toEqual([]);
    expect(await root.readRecord(path('ns1/team/data'))).toEqual({
      ...owner,
      createdAt: '2025-01-02T03:04:05.000Z',
    });
    const record = JSON.parse(await readlink(join(base, 'ns1/team/.data.kube-provisioner.json'), 'utf8'));
    expect(record.claimUid).toBe('u1');
  });

  it('gives created parents parentMode and the volume mode, rejecting an invalid parentMode', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const owner = ownerOf('ns1', 'data', 'u1');

    await root.createVolume(path('ns1/team/data'), { owner, mode: 0o777, parentMode: 0o755 });

    expect(await modeOf(join(base, 'ns1'))).toBe(0o755);
    expect(await modeOf(join(base, 'ns1/team'))).toBe(0o755);
    expect(await modeOf(join(base, 'ns1/team/data'))).toBe(0o777);
    await expect(root.createVolume(path('x/y'), { owner, mode: 0o777, parentMode: 0o10000 })).rejects.toThrow(
      'invalid mode 4096',
    );
  });

  it('applies 0777 explicitly, whatever the umask would allow', async () => {
    const base = await tempDir();
    const previous = process.umask(0o077);
    try {
      await new VolumeRoot(base).createVolume(path('a/b'), {
        owner: ownerOf('ns', 'b', 'u1'),
        mode: 0o777,
        parentMode: 0o1777,
      });
    } finally {
      process.umask(previous);
    }
    expect(await modeOf(join(base, 'a'))).toBe(0o1777);
    expect(await modeOf(join(base, 'a/b'))).toBe(0o777);
  });

  it('leaves the mode of an existing parent alone and never touches the base', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'ns1'), { mode: 0o750 });
    const baseMode = await modeOf(base);

    await new VolumeRoot(base).createVolume(path('ns1/data'), {
      owner: ownerOf('ns1', 'data', 'u1'),
      mode: 0o777,
    });

    expect(await modeOf(join(base, 'ns1'))).toBe(0o750);
    expect(await modeOf(base)).toBe(baseMode);
    expect(await modeOf(join(base, 'ns1/data'))).toBe(0o777);
  });

  it('sets uid and gid on every created level', async () => {
    const base = await tempDir();
    const calls: Array<[number, number]> = [];
    const fs: FsOps = {
      ...nodeFsOps,
      fchown: async (handle, uid, gid) => {
        calls.push([uid, gid]);
        await nodeFsOps.fchown(handle, uid, gid);
      },
    };
    const { uid, gid } = await stat(base);

    await new VolumeRoot(base, { fs }).createVolume(path('p/q/r'), {
      owner: ownerOf('ns', 'r', 'u1'),
      mode: 0o770,
      uid,
      gid,
    });

    expect(calls).toEqual([
      [uid, gid],
      [uid, gid],
      [uid, gid],
    ]);
  });

  it('reuses the directory when the record names the same claim UID (a retried provision)', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    const owner = ownerOf('ns1', 'data', 'u1');
    await root.createVolume(path('ns1/data'), { owner, mode: 0o700 });
    await writeFile(join(base, 'ns1/data/file'), 'kept');

    expect(await root.createVolume(path('ns1/data'), { owner, mode: 0o777 })).toBe('reused');
    expect(await readFile(join(base, 'ns1/data/file'), 'utf8')).toBe('kept');
    expect(await modeOf(join(base, 'ns1/data'))).toBe(0o777);
  });

  it('completes a provision that crashed after writing the record but before creating the directory', async () => {
    const base = await tempDir();
    const owner = ownerOf('ns1', 'data', 'u1');
    // The record was published, then the process died before mkdir.
    await writeFile(
      join(base, '.data.kube-provisioner.json'),
      JSON.stringify({ ...owner, createdAt: '2025-01-01T00:00:00.000Z' }),
    );

    expect(await new VolumeRoot(base).createVolume(path('data'), { owner, mode: 0o777 })).toBe('created');
    expect((await lstat(join(base, 'data'))).isDirectory()).toBe(true);
  });

  describe('existing directories of others', () => {
    it('refuses a pre-existing directory without a record, and changes nothing', async () => {
      const base = await tempDir();
      await mkdir(join(base, 'data'), { mode: 0o700 });

      const err = await rejection(
        new VolumeRoot(base).createVolume(path('data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('ownership');
      expect(err.message).toContain('already exists without an ownership record');
      expect(await modeOf(join(base, 'data'))).toBe(0o700);
      expect(await readdir(base)).toEqual(['data']);
    });

    it("refuses another claim's directory without naming that claim", async () => {
      const base = await tempDir();
      const root = new VolumeRoot(base);
      await root.createVolume(path('shared'), { owner: ownerOf('ns2', 'secret-db', 'u2'), mode: 0o700 });

      const err = await rejection(
        root.createVolume(path('shared'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('ownership');
      expect(err.message).toContain('belongs to another claim');
      expect(err.message).not.toContain('secret-db');
      expect(err.message).not.toContain('ns2');
      expect((await root.readRecord(path('shared')))?.claimUid).toBe('u2');
    });

    it.each([
      ['is not valid JSON', 'is not valid JSON', (record: string) => writeFile(record, '{')],
      [
        'lacks the string field "claimUid"',
        'lacks the string field "claimUid"',
        (record: string) => writeFile(record, '{"namespace":"ns1"}'),
      ],
      // A symbolic link's text is the record: a path planted there is never followed, and is no record.
      [
        'is a symbolic link to a file',
        'is not valid JSON',
        (record: string) => symlink('/etc/hostname', record),
      ],
    ])('refuses a volume whose record %s', async (_case, reason, plant) => {
      const base = await tempDir();
      await plant(join(base, '.data.kube-provisioner.json'));

      const err = await rejection(
        new VolumeRoot(base).createVolume(path('data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('ownership');
      expect(err.message).toContain(reason);
      expect(await readdir(base)).toEqual(['.data.kube-provisioner.json']);
    });

    it('refuses to nest a volume inside another volume', async () => {
      const base = await tempDir();
      const root = new VolumeRoot(base);
      await root.createVolume(path('ns1'), { owner: ownerOf('ns2', 'grab', 'u2'), mode: 0o777 });

      const err = await rejection(
        root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('ownership');
      expect(err.path).toBe('ns1');
      expect(await readdir(join(base, 'ns1'))).toEqual([]);
    });
  });

  describe('symlinks below the base', () => {
    it('refuses a parent that is a symlink to a directory outside the base, creating nothing there', async () => {
      const base = await tempDir();
      const outside = await tempDir();
      await symlink(outside, join(base, 'ns1'));

      const err = await rejection(
        new VolumeRoot(base).createVolume(path('ns1/x'), { owner: ownerOf('ns1', 'x', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('symlink');
      expect(err.path).toBe('ns1');
      expect(await readdir(outside)).toEqual([]);
      expect(await modeOf(outside)).toBe(0o700);
    });

    it('refuses a volume path that is a symlink', async () => {
      const base = await tempDir();
      const outside = await tempDir();
      await symlink(outside, join(base, 'x'));

      const err = await rejection(
        new VolumeRoot(base).createVolume(path('x'), { owner: ownerOf('ns1', 'x', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('symlink');
      expect(await modeOf(outside)).toBe(0o700);
    });

    it('refuses a parent that is a regular file', async () => {
      const base = await tempDir();
      await writeFile(join(base, 'ns1'), '');

      const err = await rejection(
        new VolumeRoot(base).createVolume(path('ns1/x'), { owner: ownerOf('ns1', 'x', 'u1'), mode: 0o777 }),
      );

      expect(err.kind).toBe('not-a-directory');
    });

    it('keeps working in the directory it checked when a parent is swapped for a symlink mid-call', async () => {
      const base = await tempDir();
      const outside = await tempDir();
      const racing: FsOps = {
        ...nodeFsOps,
        mkdir: async (target, mode) => {
          if (String(target).endsWith('/x')) {
            // Between opening ns1 and creating x inside it, an attacker replaces ns1.
            await rename(join(base, 'ns1'), join(base, 'moved'));
            await symlink(outside, join(base, 'ns1'));
          }
          await nodeFsOps.mkdir(target, mode);
        },
      };

      await new VolumeRoot(base, { fs: racing }).createVolume(path('ns1/x'), {
        owner: ownerOf('ns1', 'x', 'u1'),
        mode: 0o777,
      });

      expect(await readdir(outside)).toEqual([]);
      expect((await lstat(join(base, 'moved/x'))).isDirectory()).toBe(true);
    });
  });

  describe('failed creates', () => {
    it('removes everything it created when chmod fails, and reports a recognisable permission error', async () => {
      const base = await tempDir();
      let chmods = 0;
      const fs: FsOps = {
        ...nodeFsOps,
        // The first chmod is for the new parent ns1, the second for the volume directory.
        fchmod: async (handle, mode) => {
          chmods++;
          if (chmods === 2) throw systemErrorOf('EACCES', -13, 'fchmod');
          await nodeFsOps.fchmod(handle, mode);
        },
      };

      const err = await rejection(
        new VolumeRoot(base, { fs }).createVolume(path('ns1/data'), {
          owner: ownerOf('ns1', 'data', 'u1'),
          mode: 0o777,
        }),
      );

      expect(isPermissionError(err)).toBe(true);
      expect(err.errno).toBe('EACCES');
      expect(err.path).toBe('ns1/data');
      expect(err.message).toBe('chmod "ns1/data": permission denied (EACCES)');
      expect(await readdir(base)).toEqual([]);
    });

    it('removes created parents when the volume directory cannot be made', async () => {
      const base = await tempDir();
      const fs: FsOps = {
        ...nodeFsOps,
        mkdir: async (target, mode) => {
          if (String(target).endsWith('/leaf')) throw systemErrorOf('EPERM', -1, 'mkdir');
          await nodeFsOps.mkdir(target, mode);
        },
      };

      const err = await rejection(
        new VolumeRoot(base, { fs }).createVolume(path('a/b/leaf'), {
          owner: ownerOf('ns', 'leaf', 'u1'),
          mode: 0o777,
        }),
      );

      expect(err.kind).toBe('permission');
      expect(err.path).toBe('a/b/leaf');
      expect(await readdir(base)).toEqual([]);
    });

    it('keeps a pre-existing parent when rolling back', async () => {
      const base = await tempDir();
      await mkdir(join(base, 'ns1'));
      const fs: FsOps = {
        ...nodeFsOps,
        fchmod: () => Promise.reject(systemErrorOf('EACCES', -13, 'fchmod')),
      };

      await expect(
        new VolumeRoot(base, { fs }).createVolume(path('ns1/data'), {
          owner: ownerOf('ns1', 'data', 'u1'),
          mode: 0o777,
        }),
      ).rejects.toThrow('permission denied');

      expect(await readdir(join(base, 'ns1'))).toEqual([]);
    });

    it('reports a missing base as an I/O error on "."', async () => {
      const base = join(await tempDir(), 'absent');
      const err = await rejection(
        new VolumeRoot(base).createVolume(path('data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 }),
      );
      expect(err.kind).toBe('io');
      expect(err.errno).toBe('ENOENT');
      expect(err.path).toBe('.');
    });

    it('refuses invalid modes', async () => {
      const root = new VolumeRoot(await tempDir());
      const owner = ownerOf('ns', 'data', 'u1');
      await expect(root.createVolume(path('x'), { owner, mode: 0o10000 })).rejects.toThrow(RangeError);
      await expect(root.createVolume(path('x'), { owner, mode: 0o777, parentMode: -1 })).rejects.toThrow(
        RangeError,
      );
    });
  });
});
