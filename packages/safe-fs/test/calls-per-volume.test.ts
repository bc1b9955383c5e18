import { constants } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, type FsPath, localFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { removalName } from '../src/reserved-names.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
// Linux's O_PATH, which `fs.constants` lacks.
const pathOnly = 0o10000000;

/** The last segment of `path`, with a temporary record name's writer tag and UUID cut off. */
function nameOf(path: FsPath): string {
  const last = path.toString().slice(path.toString().lastIndexOf('/') + 1);
  return last.startsWith('.kube-provisioner.tmp.') ? 'temporary' : last;
}

/** `fs` recording each table call as `<call> <name>`, opens with the flags that matter here. */
function recording(fs: FsOps): { readonly fs: FsOps; readonly calls: string[] } {
  const calls: string[] = [];
  const flagNames = (flags: number) =>
    [
      (flags & constants.O_CREAT) !== 0 ? 'creat' : '',
      (flags & constants.O_EXCL) !== 0 ? 'excl' : '',
      (flags & constants.O_DIRECTORY) !== 0 ? 'dir' : '',
      (flags & pathOnly) !== 0 ? 'path' : '',
    ]
      .filter((flag) => flag !== '')
      .join('|');
  const record =
    <A extends [FsPath, ...unknown[]], R>(call: string, fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls.push(`${call} ${nameOf(args[0])}`);
      return fn(...args);
    };
  return {
    calls,
    fs: {
      ...fs,
      open: (path, flags, mode) => {
        calls.push(`open ${nameOf(path)} ${flagNames(flags)}`);
        return fs.open(path, flags, mode);
      },
      fstat: (handle) => {
        calls.push('fstat');
        return fs.fstat(handle);
      },
      fchmod: (handle, mode) => {
        calls.push('fchmod');
        return fs.fchmod(handle, mode);
      },
      mkdir: record('mkdir', fs.mkdir),
      lstat: record('lstat', fs.lstat),
      // Of an open directory (`/proc/self/fd/<fd>`): the name says nothing.
      readdir: (path) => {
        calls.push('readdir');
        return fs.readdir(path);
      },
      // A listing read in batches: one `readdir` per batch, as one `readdir` of a small directory.
      opendir: async (path, batchSize) => {
        const listing = await fs.opendir(path, batchSize);
        return {
          read: () => {
            calls.push('readdir');
            return listing.read();
          },
          close: () => listing.close(),
        };
      },
      rmdir: record('rmdir', fs.rmdir),
      unlink: record('unlink', fs.unlink),
      rename: record('rename', fs.rename),
      link: record('link', fs.link),
      symlink: (target, path) => {
        calls.push(`symlink ${nameOf(path)}`);
        return fs.symlink(target, path);
      },
      readlink: record('readlink', fs.readlink),
      access: record('access', async (path: FsPath, mode: number) => fs.access?.(path, mode)),
    },
  };
}

const owner = (uid: string) => ({ ...ownerOf('ns1', uid, uid), pvName: `pv-${uid}` });

describe('the system calls of one volume (each an NFS round trip or more on a mount)', () => {
  it('creates with one lookup, a record published by one symlink, and one check of the new directory', async () => {
    const { fs, calls } = recording(localFsOps);
    const base = await tempDir();
    const root = new VolumeRoot(base, { fs });
    // The first operation also sweeps the base for leftovers: not part of a create's cost.
    await root.createVolume(parseRelativeVolumePath('warm-up'), { owner: owner('w'), mode: 0o777 });
    calls.length = 0;
    await root.createVolume(parseRelativeVolumePath('ns1-data'), { owner: owner('u1'), mode: 0o777 });
    expect(calls).toEqual([
      // Path-only: over NFS not revalidated (a GETATTR); the server checks every step that decides.
      `open ${basename(base)} dir|path`,
      'lstat ns1-data',
      // No read of the record first: the symlink fails on one already there. Its text is the whole
      // record, so nothing is written under a temporary name, flushed, linked and removed.
      'symlink .ns1-data.kube-provisioner.json',
      'mkdir ns1-data',
      // Path-only: the listing below opens it again, and over NFS each open is revalidated.
      'open ns1-data dir|path',
      'fstat',
      'lstat ns1-data',
      'readdir',
      'fchmod',
    ]);
  });

  it('deletes with one read of the record, one listing of the volume, and no record rewritten: the volume renamed to its removal name', async () => {
    const { fs, calls } = recording(localFsOps);
    const base = await tempDir();
    const root = new VolumeRoot(base, { fs });
    await root.createVolume(parseRelativeVolumePath('ns1-data'), { owner: owner('u1'), mode: 0o777 });
    calls.length = 0;
    await expect(root.deleteVolume(parseRelativeVolumePath('ns1-data'), { pvName: 'pv-u1' })).resolves.toBe(
      'deleted',
    );
    const removal = removalName('ns1-data', 'pv-u1');
    expect(calls.map((call) => call.replace(/^access \d+$/u, 'access'))).toEqual([
      `open ${basename(base)} dir`,
      'readlink .ns1-data.kube-provisioner.json',
      // Opened without an lstat first: the open itself refuses a link or a non-directory.
      'open ns1-data dir',
      'fstat',
      // One listing serves every look at an empty volume: nothing more to walk, nothing to empty.
      'readdir',
      'access',
      // The stamp that the removal is this package's: one rename, where a record rewrite took a
      // symlink and a rename (and over NFS a revalidation between them).
      'rename ns1-data',
      'unlink .ns1-data.kube-provisioner.json',
      // After the unlink changed the parent: over NFS a LOOKUP, which the rmdir would make anyway.
      `lstat ${removal}`,
      `rmdir ${removal}`,
    ]);
  });
});
