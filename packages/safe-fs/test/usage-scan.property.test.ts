import { execFileSync } from 'node:child_process';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, scanVolumeUsage } from '../src/index.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const volume = parseRelativeVolumePath('pvc-1');

/** One step of building a hostile tree; `at` picks an existing directory or file by index. */
type Step =
  | { readonly kind: 'dir'; readonly at: number }
  | { readonly kind: 'file'; readonly at: number; readonly size: number }
  | { readonly kind: 'hardlink'; readonly at: number; readonly target: number }
  | { readonly kind: 'symlink'; readonly at: number; readonly outward: boolean }
  | { readonly kind: 'fifo'; readonly at: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('dir' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('file' as const), at: fc.nat(), size: fc.integer({ min: 0, max: 40_000 }) }),
  fc.record({ kind: fc.constant('hardlink' as const), at: fc.nat(), target: fc.nat() }),
  fc.record({ kind: fc.constant('symlink' as const), at: fc.nat(), outward: fc.boolean() }),
  fc.record({ kind: fc.constant('fifo' as const), at: fc.nat() }),
);

async function build(dir: string, outside: string, steps: readonly Step[]): Promise<void> {
  const dirs = [dir];
  const files: string[] = [];
  for (const [index, s] of steps.entries()) {
    const path = join(dirs[s.at % dirs.length] as string, `e${index}`);
    if (s.kind === 'dir') {
      await mkdir(path);
      dirs.push(path);
    } else if (s.kind === 'file') {
      await writeFile(path, Buffer.alloc(s.size, 7));
      files.push(path);
    } else if (s.kind === 'hardlink' && files.length > 0) {
      await link(files[s.target % files.length] as string, path);
    } else if (s.kind === 'symlink') {
      await symlink(s.outward ? outside : '..', path);
    } else if (s.kind === 'fifo') {
      execFileSync('mkfifo', [path]);
    }
  }
}

function du(dir: string): { bytes: number; inodes: number } {
  const first = (args: string[]) => Number(execFileSync('du', args, { encoding: 'utf8' }).split('\t')[0]);
  return { bytes: first(['-s', '-x', '-B1', dir]), inodes: first(['-s', '-x', '--inodes', dir]) };
}

describe('scanVolumeUsage on generated hostile trees', () => {
  it('agrees with du -x on every tree of directories, files, hard links, links out and FIFOs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const base = await tempDir();
        const outside = await tempDir();
        await writeFile(join(outside, 'big'), Buffer.alloc(200_000, 1));
        const dir = join(base, volume);
        await mkdir(dir);
        await build(dir, outside, steps);

        const usage = await scanVolumeUsage(base, volume);

        expect(usage).toMatchObject({ ...du(dir), unreadable: 0 });
      }),
      { numRuns: 40 },
    );
  });
});
