import { mkdir, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSafeFsError,
  parseRelativeVolumePath,
  type RelativeVolumePath,
  type VolumeOwner,
  VolumeRoot,
} from '../src/index.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

// A small universe, so that generated claims collide with each other and with pre-existing data.
const segment = fc.constantFrom('ns1', 'ns2', 'a');
const volumePath = fc
  .array(segment, { minLength: 1, maxLength: 3 })
  .map((segments) => parseRelativeVolumePath(segments.join('/')));
// A number picks an existing directory (pre-existing data, a volume or a parent of one), and most
// requests ask for adoption, so that adoption is attempted often.
const request = fc.record({
  target: fc.oneof(volumePath, fc.nat()),
  namespace: fc.constantFrom('ns1', 'ns2'),
  adopt: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
});

/** `path` and each of its parents. */
function withParents(path: RelativeVolumePath): RelativeVolumePath[] {
  const segments = path.split('/');
  return segments.map((_, end) => parseRelativeVolumePath(segments.slice(0, end + 1).join('/')));
}

/** Every bookkeeping name anywhere below `dir`. */
async function bookkeepingBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.split('/').some((name) => name.includes('.kube-provisioner')));
}

describe('adoption over generated claims and pre-existing data', () => {
  it('never replaces a record, nests volumes, crosses namespaces or hands out bookkeeping', async () => {
    let adopted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(volumePath, { minLength: 1, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 6 }),
        async (legacy, requests) => {
          const base = await realpath(await tempDir());
          for (const dir of legacy) await mkdir(join(base, dir), { recursive: true });
          const root = new VolumeRoot(base);
          const recorded = new Map<RelativeVolumePath, string>();

          for (const [index, { target, namespace, adopt }] of requests.entries()) {
            const existing = [...legacy, ...recorded.keys()].flatMap(withParents);
            const path = typeof target === 'number' ? existing[target % existing.length] : target;
            if (path === undefined) continue;
            const owner: VolumeOwner = {
              claimUid: `u${index}`,
              namespace,
              claimName: `c${index}`,
              pvName: `pv${index}`,
              provisioner: 'example.com/test',
            };
            const before = await bookkeepingBelow(join(base, path)).catch(() => undefined);
            const outcome = await root
              .createVolume(path, { owner, mode: 0o777, adopt })
              .catch((err: unknown) => {
                expect(isSafeFsError(err)).toBe(true);
                return undefined;
              });
            if (outcome === 'adopted') {
              adopted++;
              expect(adopt).toBe(true);
              expect(path.split('/')[0]).toBe(namespace);
              expect(path).toContain('/');
              expect(before).toEqual([]);
            }
            if (outcome !== undefined) {
              // Claim UIDs and PV names are unique here, so no success may take over a volume.
              expect(recorded.has(path)).toBe(false);
              recorded.set(path, owner.claimUid);
            }
            for (const [other, claimUid] of recorded) {
              expect((await root.readOwner(other))?.claimUid).toBe(claimUid);
              for (const inner of recorded.keys()) expect(inner.startsWith(`${other}/`)).toBe(false);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
    // The property is not vacuous: adoption did happen.
    expect(adopted).toBeGreaterThan(2);
  });
});
