import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { interleaving, ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** Every entry below `dir`, as relative paths, sorted. */
async function tree(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true });
  const names: string[] = [];
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    names.push(relative);
    if (entry.isDirectory()) names.push(...(await tree(dir, relative)));
  }
  return names.sort();
}

describe('two concurrent provisions of one claim', () => {
  it('both succeed (created and reused), with one directory, one record and no leftovers', async () => {
    let interleaved = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('data', 'ns1/data', 'ns1/team/data'),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 40 }),
        async (target, first, second) => {
          const base = await tempDir();
          const path = parseRelativeVolumePath(target);
          const owner = ownerOf('ns1', 'data', 'u1');
          const replicas = [first, second].map(
            (delays) => new VolumeRoot(base, { fs: interleaving(delays) }),
          );

          const outcomes = await Promise.all(
            replicas.map((root) => root.createVolume(path, { owner, mode: 0o777 })),
          );

          expect(outcomes).toContain('created');
          for (const outcome of outcomes) expect(['created', 'reused']).toContain(outcome);
          if (outcomes.includes('reused')) interleaved++;
          const segments = target.split('/');
          const leaf = segments.pop() ?? '';
          const parents = segments.map((_, index) => segments.slice(0, index + 1).join('/'));
          const inParent = (name: string) => (segments.length === 0 ? name : `${segments.join('/')}/${name}`);
          expect(await tree(base)).toEqual(
            [
              ...parents,
              ...parents.map((parent) => `${parent}/.kube-provisioner-parent.json`),
              target,
              inParent(`.${leaf}.kube-provisioner.json`),
            ].sort(),
          );
          expect((await new VolumeRoot(base).readRecord(path))?.claimUid).toBe('u1');
        },
      ),
      { numRuns: 40 },
    );
    // Not vacuous: some runs had the two provisions overlap.
    expect(interleaved).toBeGreaterThan(0);
  });

  it('reuses the directory a concurrent provision made between this one publishing the record and its mkdir', async () => {
    const base = await tempDir();
    const path = parseRelativeVolumePath('ns1/data');
    const owner = ownerOf('ns1', 'data', 'u1');
    let other: Promise<string> | undefined;
    const fs: FsOps = {
      ...nodeFsOps,
      mkdir: async (target, mode) => {
        if (other === undefined && String(target).endsWith('/data')) {
          // The other replica reads this one's record and makes the volume first.
          other = new VolumeRoot(base).createVolume(path, { owner, mode: 0o777 });
          await other;
        }
        return nodeFsOps.mkdir(target, mode);
      },
    };

    const outcome = await new VolumeRoot(base, { fs }).createVolume(path, { owner, mode: 0o777 });

    expect([outcome, await other]).toEqual(['reused', 'created']);
    expect(await tree(base)).toEqual(
      ['ns1', 'ns1/.kube-provisioner-parent.json', 'ns1/.data.kube-provisioner.json', 'ns1/data'].sort(),
    );
    expect((await new VolumeRoot(base).readRecord(path))?.claimUid).toBe('u1');
  });
});
