import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, type TakeBackOptions, VolumeRoot } from '../src/index.ts';
import { interleaving, ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

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

/** A base holding the archive of `source` (claim `old` of namespace `ns1`, PV `pvc-old`) with a file. */
async function archivedSource(source: string): Promise<string> {
  const base = await tempDir();
  const root = new VolumeRoot(base);
  await root.createVolume(path(source), { owner: ownerOf('ns1', 'old', 'old'), mode: 0o777 });
  await writeFile(join(base, source, 'file'), 'kept');
  await root.archiveVolume(path(source), { pvName: 'pvc-old' });
  return base;
}

function request(uid: string, beforeEachWrite?: () => void): TakeBackOptions {
  return { owner: ownerOf('ns1', 'new', uid), mode: 0o777, fromPvName: 'pvc-old', beforeEachWrite };
}

const layouts = fc.constantFrom(
  { source: 'ns1-old', target: 'ns1-new' },
  { source: 'ns1/old', target: 'ns1/new' },
  { source: 'a/ns1/old', target: 'ns1/b/new' },
);

describe('take-back interrupted anywhere', () => {
  it('is finished by the retry: the data in the new volume only, no record or parent left behind', async () => {
    let interrupted = 0;
    await fc.assert(
      fc.asyncProperty(layouts, fc.nat({ max: 40 }), async ({ source, target }, stopAt) => {
        const base = await archivedSource(source);
        let writes = 0;
        const stop = () => {
          if (writes++ === stopAt) throw new Error('killed');
        };
        // A kill: the interrupted call stops at one write with everything before it left in place.
        await new VolumeRoot(base)
          .takeBackVolume(path(target), request('u2', stop))
          .catch(() => interrupted++);

        const retried = await new VolumeRoot(base).takeBackVolume(path(target), request('u2'));

        expect(['taken-back', 'reused']).toContain(retried.outcome);
        expect(await readFile(join(base, target, 'file'), 'utf8')).toBe('kept');
        expect(await new VolumeRoot(base).readRecord(path(target))).toMatchObject({
          claimUid: 'u2',
          takenFrom: 'pvc-old',
        });
        const entries = await tree(base);
        // Only the new volume (with its record and parents) is left: no old directory, record or lock.
        expect(entries.filter((entry) => entry.includes('old'))).toEqual([]);
        expect(entries.filter((entry) => entry.endsWith('.lock'))).toEqual([]);
      }),
      { numRuns: 60 },
    );
    // Not vacuous: many runs stopped the first call somewhere (about half, with up to 40 writes asked).
    expect(interrupted).toBeGreaterThan(10);
  });
});

describe('two claims taking back the same data at once', () => {
  it('exactly one gets it, whatever the interleaving; the other is refused and nothing is lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        layouts,
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 30 }),
        async ({ source, target }, first, second) => {
          const base = await archivedSource(source);
          const targets = [target, `${target}2`];
          const results = await Promise.allSettled(
            [first, second].map((delays, index) =>
              new VolumeRoot(base, { fs: interleaving(delays) }).takeBackVolume(path(targets[index] ?? ''), {
                ...request(`u${index}`),
              }),
            ),
          );

          const winners = results.flatMap((result, index) => (result.status === 'fulfilled' ? [index] : []));
          expect(winners).toHaveLength(1);
          const winner = targets[winners[0] ?? 0] ?? '';
          expect(await readFile(join(base, winner, 'file'), 'utf8')).toBe('kept');
          for (const result of results) {
            if (result.status === 'rejected')
              expect(String(result.reason)).toContain('taken back by another claim');
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
