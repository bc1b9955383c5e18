import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { interleaving, ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** Every directory below `dir` that has an ownership record beside it, as relative paths. */
async function recordedVolumes(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entries.some((other) => other.name === `.${entry.name}.kube-provisioner.json`)) found.push(relative);
    found.push(...(await recordedVolumes(dir, relative)));
  }
  return found;
}

function isNested(paths: readonly string[]): boolean {
  return paths.some((outer) => paths.some((inner) => inner.startsWith(`${outer}/`)));
}

// Pairs of renders where one is the other's ancestor, from claims of different namespaces.
const nestedPairs = [
  ['o1', 'o1/db'],
  ['team-r0', 'team-r0/db'],
  ['a/b', 'a/b/c/d'],
  ['a', 'a/b/c'],
] as const;

describe('creates of nested paths by different claims, interleaved', () => {
  it('never both succeed, and never leave one volume inside another', async () => {
    const winners = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...nestedPairs),
        fc.boolean(),
        // The second create starts this many event-loop turns after the first, or once it settled.
        fc.oneof(fc.nat({ max: 300 }), fc.constant('after-first' as const)),
        fc.array(fc.nat({ max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat({ max: 4 }), { minLength: 1, maxLength: 40 }),
        async ([outer, inner], innerFirst, headStart, first, second) => {
          const base = await tempDir();
          const jobs = [
            { path: outer, owner: ownerOf('team-b', 'outer', 'u-outer'), delays: first },
            { path: inner, owner: ownerOf('team-a', 'inner', 'u-inner'), delays: second },
          ];
          if (innerFirst) jobs.reverse();
          const create = ({ path, owner, delays }: (typeof jobs)[number]) =>
            new VolumeRoot(base, { fs: interleaving(delays) }).createVolume(parseRelativeVolumePath(path), {
              owner,
              mode: 0o777,
            });
          const [firstJob, secondJob] = jobs as [(typeof jobs)[number], (typeof jobs)[number]];
          const started = create(firstJob);
          // Handled here so that a refusal during the head start is not an unhandled rejection.
          const settled = started.catch(() => undefined);
          if (headStart === 'after-first') await settled;
          else
            for (let turn = 0; turn < headStart; turn++)
              await new Promise((resolve) => setImmediate(resolve));
          const results = await Promise.allSettled([started, create(secondJob)]);

          const won = results.flatMap((result, index) => (result.status === 'fulfilled' ? [index] : []));
          expect(won.length).toBeLessThanOrEqual(1);
          for (const index of won) {
            expect(results[index]).toEqual({ status: 'fulfilled', value: 'created' });
            winners.add(jobs[index]?.path === outer ? 'outer' : 'inner');
          }
          const volumes = await recordedVolumes(base);
          expect(isNested(volumes)).toBe(false);
          expect(volumes.length).toBe(won.length);
        },
      ),
      { numRuns: 150 },
    );
    // Not vacuous: either side wins (at least when the other starts after it settled).
    expect([...winners].sort()).toEqual(['inner', 'outer']);
  });

  it('refuses the outer volume when the inner create made its parent between its record and its mkdir', async () => {
    const base = await tempDir();
    let inner: Promise<unknown> | undefined;
    const fs: FsOps = {
      ...nodeFsOps,
      mkdir: async (target, mode) => {
        if (inner === undefined && String(target).endsWith('/o1')) {
          inner = new VolumeRoot(base).createVolume(parseRelativeVolumePath('o1/db'), {
            owner: ownerOf('team-a', 'inner', 'u-inner'),
            mode: 0o777,
          });
          await inner.catch(() => undefined);
        }
        return nodeFsOps.mkdir(target, mode);
      },
    };
    const outer = new VolumeRoot(base, { fs }).createVolume(parseRelativeVolumePath('o1'), {
      owner: ownerOf('team-b', 'outer', 'u-outer'),
      mode: 0o777,
    });

    // `inner` starts inside the outer create's mkdir: settle the outer first.
    const first = await Promise.allSettled([outer]);
    expect(inner).toBeDefined();
    const results = [...first, ...(await Promise.allSettled([inner]))];

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(isNested(await recordedVolumes(base))).toBe(false);
  });

  it('refuses the inner volume when its parent would be made while the outer is a directory without contents yet', async () => {
    const base = await tempDir();
    let outer: Promise<unknown> | undefined;
    const fs: FsOps = {
      ...nodeFsOps,
      mkdir: async (target, mode) => {
        await nodeFsOps.mkdir(target, mode);
        // The inner create's parent `o1` exists now, with nothing in it yet: the outer create runs
        // to its end right here.
        if (outer === undefined && String(target).endsWith('/o1')) {
          outer = new VolumeRoot(base).createVolume(parseRelativeVolumePath('o1'), {
            owner: ownerOf('team-b', 'outer', 'u-outer'),
            mode: 0o777,
          });
          await outer.catch(() => undefined);
        }
      },
    };
    const inner = new VolumeRoot(base, { fs }).createVolume(parseRelativeVolumePath('o1/db'), {
      owner: ownerOf('team-a', 'inner', 'u-inner'),
      mode: 0o777,
    });

    // `outer` starts inside the inner create's mkdir: settle the inner first.
    const first = await Promise.allSettled([inner]);
    expect(outer).toBeDefined();
    const results = [...first, ...(await Promise.allSettled([outer]))];

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(isNested(await recordedVolumes(base))).toBe(false);
  });

  it('never both succeed with real concurrency on the real file system', async () => {
    const base = await tempDir();
    const attempts = 60;
    for (let round = 0; round < attempts; round++) {
      const results = await Promise.allSettled([
        new VolumeRoot(base).createVolume(parseRelativeVolumePath(`r${round}`), {
          owner: ownerOf('team-b', `outer-${round}`, `u-outer-${round}`),
          mode: 0o777,
        }),
        new VolumeRoot(base).createVolume(parseRelativeVolumePath(`r${round}/db`), {
          owner: ownerOf('team-a', `inner-${round}`, `u-inner-${round}`),
          mode: 0o777,
        }),
      ]);
      expect(results.filter((result) => result.status === 'fulfilled').length).toBeLessThanOrEqual(1);
    }
    expect(isNested(await recordedVolumes(base))).toBe(false);
  });
});
