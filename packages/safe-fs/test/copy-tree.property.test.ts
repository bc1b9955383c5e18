import { createHash } from 'node:crypto';
import { link, lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import { nodeFsOps } from '../src/index.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** Relative paths below `dir`, sorted, entering only real directories (`readdir`'s `recursive` follows links). */
async function entries(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    found.push(relative);
    if (entry.isDirectory()) found.push(...(await entries(dir, relative)));
  }
  return found.sort();
}

/** Every entry below `dir`: type, mode, owner, content or link text, and which earlier file it is a hard link of. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const inodes = new Map<number, string>();
  for (const entry of await entries(dir)) {
    const path = join(dir, entry);
    const stats = await lstat(path);
    const meta = `${(stats.mode & 0o7777).toString(8)}`;
    if (stats.isSymbolicLink()) result[entry] = `link ${await readlink(path)}`;
    else if (stats.isDirectory()) result[entry] = `dir ${meta}`;
    else {
      const first = inodes.get(stats.ino) ?? entry;
      inodes.set(stats.ino, first);
      result[entry] = `file ${createHash('sha256')
        .update(await readFile(path))
        .digest('hex')} ${meta} ${first}`;
    }
  }
  return result;
}

const name = fc.constantFrom('a', 'b', 'c', 'd', 'é', '.hidden', '..x', 'pvc-1');
const step = fc.oneof(
  fc.record({ kind: fc.constant('dir' as const), at: fc.nat(), name }),
  fc.record({ kind: fc.constant('file' as const), at: fc.nat(), name, content: fc.string() }),
  fc.record({
    kind: fc.constant('link' as const),
    at: fc.nat(),
    name,
    target: fc.constantFrom('/etc', '../..', 'a', '/'),
  }),
  fc.record({ kind: fc.constant('hard' as const), at: fc.nat(), name, of: fc.nat() }),
);

describe('copyTree over generated trees', () => {
  it('makes a copy equal in types, contents, modes, link texts and hard-link groups, and touches nothing outside', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const base = await tempDir();
        const source = join(base, 'source');
        await mkdir(source);
        await mkdir(join(base, 'target'));
        const dirs = [source];
        const files: string[] = [];
        for (const op of steps) {
          const parent = dirs[op.at % dirs.length] ?? source;
          const path = join(parent, op.name);
          if ((await lstat(path).catch(() => undefined)) !== undefined) continue;
          if (op.kind === 'dir') {
            await mkdir(path);
            dirs.push(path);
          } else if (op.kind === 'file') {
            await writeFile(path, op.content);
            files.push(path);
          } else if (op.kind === 'link') {
            await symlink(op.target, path);
          } else if (files.length > 0) {
            await link(files[op.of % files.length] ?? '', path);
          }
        }
        const root = await openBase(nodeFsOps, base);
        const [from, to] = [await root.openDirectory('source'), await root.openDirectory('target')];
        if (from === undefined || to === undefined) throw new Error('not opened');
        try {
          await copyTree(from, to);
        } finally {
          await Promise.all([from.close(), to.close(), root.close()]);
        }

        expect(await snapshot(join(base, 'target'))).toEqual(await snapshot(source));
        expect((await readdir(base)).sort()).toEqual(['source', 'target']);
      }),
      { numRuns: 60 },
    );
  });
});
