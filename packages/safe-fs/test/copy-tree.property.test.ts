import { link, lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyTree } from '../src/copy-tree.ts';
import { openBase } from '../src/directory-handle.ts';
import { nodeFsOps } from '../src/index.ts';
import { treeSnapshot } from '../src/testing/tree-snapshot.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

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

        expect(await treeSnapshot(join(base, 'target'), { owners: false })).toEqual(
          await treeSnapshot(source, { owners: false }),
        );
        expect((await readdir(base)).sort()).toEqual(['source', 'target']);
      }),
      { numRuns: 60 },
    );
  });
});
