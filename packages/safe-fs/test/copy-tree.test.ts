import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyTree } from '../src/copy-tree.ts';
import { type DirectoryHandle, openBase } from '../src/directory-handle.ts';
import { nodeFsOps } from '../src/index.ts';
import { rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** Opens `source` and `target` below a fresh base and copies one into the other. */
async function copied(
  build: (source: string, base: string) => Promise<void>,
  options: Parameters<typeof copyTree>[2] = {},
): Promise<{ base: string; target: string; result: Promise<Awaited<ReturnType<typeof copyTree>>> }> {
  const base = await tempDir();
  await mkdir(join(base, 'source'));
  await mkdir(join(base, 'target'), 0o700);
  await build(join(base, 'source'), base);
  const root = await openBase(nodeFsOps, base);
  const open = async (name: string): Promise<DirectoryHandle> => {
    const handle = await root.openDirectory(name);
    if (handle === undefined) throw new Error(`no ${name}`);
    return handle;
  };
  const [source, target] = [await open('source'), await open('target')];
  const result = copyTree(source, target, options).finally(async () => {
    await Promise.all([source.close(), target.close(), root.close()]);
  });
  await result.catch(() => undefined);
  return { base, target: join(base, 'target'), result };
}

describe('copyTree', () => {
  it('copies contents, modes, owners and hard links, and links as links', async () => {
    const { target, result } = await copied(async (source) => {
      await mkdir(join(source, 'dir/sub'), { recursive: true });
      await writeFile(join(source, 'dir/sub/file'), 'data');
      await chmod(join(source, 'dir/sub/file'), 0o640);
      await chown(join(source, 'dir/sub/file'), 1234, 5678);
      await chmod(join(source, 'dir'), 0o2750);
      await link(join(source, 'dir/sub/file'), join(source, 'hard'));
      await symlink('/etc/passwd', join(source, 'out'));
      await chmod(join(source, 'dir/sub'), 0o500); // read-only: still filled, mode applied last
    });

    expect(await result).toEqual({ entries: 5, bytes: 4, skipped: 0 });
    expect(await readFile(join(target, 'dir/sub/file'), 'utf8')).toBe('data');
    const file = await stat(join(target, 'dir/sub/file'));
    expect([file.mode & 0o7777, file.uid, file.gid, file.nlink]).toEqual([0o640, 1234, 5678, 2]);
    expect((await stat(join(target, 'hard'))).ino).toBe(file.ino);
    expect((await stat(join(target, 'dir'))).mode & 0o7777).toBe(0o2750);
    expect((await stat(join(target, 'dir/sub'))).mode & 0o7777).toBe(0o500);
    expect(await readlink(join(target, 'out'))).toBe('/etc/passwd');
    expect((await lstat(join(target, 'out'))).isSymbolicLink()).toBe(true);
  });

  it('never follows a link out of the source: a linked directory is copied as the link', async () => {
    const { base, target, result } = await copied(async (source, root) => {
      await mkdir(join(root, 'outside'));
      await writeFile(join(root, 'outside/secret'), 'secret');
      await symlink(join(root, 'outside'), join(source, 'escape'));
      await symlink('../../outside/secret', join(source, 'relative'));
    });

    await result;
    expect((await lstat(join(target, 'escape'))).isSymbolicLink()).toBe(true);
    expect(await readdir(join(base, 'outside'))).toEqual(['secret']);
    expect((await readdir(target)).sort()).toEqual(['escape', 'relative']);
  });

  it('refuses a FIFO by default, and skips it when told', async () => {
    const build = async (source: string) => {
      execFileSync('mkfifo', [join(source, 'pipe')]);
      await writeFile(join(source, 'file'), 'x');
    };
    const refused = await copied(build);
    const error = await rejection(refused.result);
    expect(error.message).toContain('is a FIFO, socket or device file');

    const skipped = await copied(build, { specialFiles: 'skip' });
    expect(await skipped.result).toMatchObject({ skipped: 1 });
    expect(await readdir(skipped.target)).toEqual(['file']);
  });

  it('copies a tree 300 directories deep, and refuses one deeper than maxDepth', async () => {
    const deep = async (source: string) => {
      await mkdir(join(source, ...Array.from({ length: 300 }, () => 'd')), { recursive: true });
    };
    const { target, result } = await copied(deep);
    expect((await result).entries).toBe(300);
    expect((await stat(join(target, ...Array.from({ length: 300 }, () => 'd')))).isDirectory()).toBe(true);

    const limited = await copied(deep, { maxDepth: 100 });
    expect((await rejection(limited.result)).message).toContain('more than 100 directories deep');
  });

  it('fails on an unreadable entry instead of leaving it out', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'source'));
    await mkdir(join(base, 'target'));
    await writeFile(join(base, 'source/locked'), 'x');
    const denied = Object.assign(new Error('EACCES: open'), { code: 'EACCES', errno: -13, syscall: 'open' });
    const fs = {
      ...nodeFsOps,
      open: async (path: string | Buffer, flags: number, mode?: number) => {
        if (String(path).endsWith('/locked') && (flags & constants.O_WRONLY) === 0) throw denied;
        return nodeFsOps.open(path, flags, mode);
      },
    };
    const root = await openBase(fs, base);
    const [source, target] = [await root.openDirectory('source'), await root.openDirectory('target')];
    if (source === undefined || target === undefined) throw new Error('not opened');

    const error = await rejection(copyTree(source, target));

    expect(error.kind).toBe('permission');
    await Promise.all([source.close(), target.close(), root.close()]);
  });

  it('stops at the next entry when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('claim deleted'));
    const { result } = await copied(async (source) => writeFile(join(source, 'file'), 'x'), {
      signal: controller.signal,
    });

    expect((await rejection(result)).message).toBe('claim deleted');
  });
});
