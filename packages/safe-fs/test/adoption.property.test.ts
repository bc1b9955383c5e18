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
// requests ask for adoption, so that adoption is attempted often. Some requests instead release a
// volume (`onDelete: retain`), on behalf of its own PV or of another one.
const request = fc.record({
  target: fc.oneof({ arbitrary: volumePath, weight: 1 }, { arbitrary: fc.nat(), weight: 2 }),
  namespace: fc.constantFrom('ns1', 'ns2'),
  adopt: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  release: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 4 },
    { arbitrary: fc.constant('own-pv' as const), weight: 2 },
    { arbitrary: fc.constant('other-pv' as const), weight: 1 },
  ),
});

/** What the test knows of a volume it made: whose it is, and whether its PV released it. */
interface Volume {
  readonly owner: VolumeOwner;
  released: boolean;
}

/** `path` and each of its parents. */
function withParents(path: RelativeVolumePath): RelativeVolumePath[] {
  const segments = path.split('/');
  return segments.map((_, end) => parseRelativeVolumePath(segments.slice(0, end + 1).join('/')));
}

/** Every reserved name anywhere below `dir`. */
async function reservedNamesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.split('/').some((name) => name.includes('.kube-provisioner')));
}

describe('adoption over generated claims and pre-existing data', () => {
  it('never replaces a live record, nests volumes, crosses namespaces or hands out records and parent markers', async () => {
    let adopted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(volumePath, { minLength: 1, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 10 }),
        async (legacy, requests) => {
          const base = await realpath(await tempDir());
          for (const dir of legacy) await mkdir(join(base, dir), { recursive: true });
          const root = new VolumeRoot(base);
          const recorded = new Map<RelativeVolumePath, Volume>();

          for (const [index, { target, namespace, adopt, release }] of requests.entries()) {
            // Volumes are picked more often than other directories, and a release picks only among
            // them (when there are any), so that released volumes are often asked for again.
            const volumes = [...recorded.keys()];
            const existing =
              release === undefined || volumes.length === 0
                ? [...volumes, ...[...legacy, ...volumes].flatMap(withParents)]
                : volumes;
            const path = typeof target === 'number' ? existing[target % existing.length] : target;
            if (path === undefined) continue;
            const volume = recorded.get(path);
            if (release !== undefined) {
              const pvName =
                release === 'own-pv' && volume !== undefined ? volume.owner.pvName : `pv${index}`;
              const outcome = await root.releaseVolume(path, { pvName });
              if (outcome === 'released') {
                expect(volume?.owner.pvName).toBe(pvName);
                if (volume !== undefined) volume.released = true;
              } else if (volume !== undefined) {
                expect(outcome).toBe('other-owner');
                expect(release).toBe('other-pv');
              }
              continue;
            }
            const owner: VolumeOwner = {
              claimUid: `u${index}`,
              namespace,
              claimName: `c${index}`,
              pvName: `pv${index}`,
              provisioner: 'example.com/test',
            };
            const before = await reservedNamesBelow(join(base, path)).catch(() => undefined);
            const outcome = await root
              .createVolume(path, { owner, mode: 0o777, adopt, namespaceScopedPath: adopt })
              .catch((err: unknown) => {
                expect(isSafeFsError(err)).toBe(true);
                return undefined;
              });
            if (outcome === 'adopted') {
              adopted++;
              expect(adopt).toBe(true);
              if (volume === undefined) {
                expect(path.split('/')[0]).toBe(namespace);
                expect(path).toContain('/');
                expect(before).toEqual([]);
              } else {
                // Only a released volume of the claim's own namespace may change hands.
                expect(volume.released).toBe(true);
                expect(volume.owner.namespace).toBe(namespace);
              }
            }
            if (outcome !== undefined) {
              // Claim UIDs and PV names are unique here, so no success may take over a live volume.
              expect(outcome === 'adopted' || volume === undefined).toBe(true);
              recorded.set(path, { owner, released: false });
            }
            for (const [other, { owner: expected, released }] of recorded) {
              const record = await root.readRecord(other);
              expect(record?.claimUid).toBe(expected.claimUid);
              expect(record?.releasedAt !== undefined).toBe(released);
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

  it('hands a retained volume over exactly when it was released and the namespace matches', async () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('create' as const),
        namespace: fc.constantFrom('ns1', 'ns2'),
        adopt: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('release' as const), ownPv: fc.boolean() }),
    );
    let reattached = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('ns1-data', 'ns1/data'),
        fc.array(step, { maxLength: 8 }),
        async (raw, steps) => {
          const path = parseRelativeVolumePath(raw);
          const root = new VolumeRoot(await tempDir());
          let model: Volume | undefined;
          for (const [index, action] of steps.entries()) {
            if (action.kind === 'release') {
              const pvName = action.ownPv && model !== undefined ? model.owner.pvName : `other${index}`;
              const outcome = await root.releaseVolume(path, { pvName });
              if (model === undefined) expect(outcome).toBe('missing');
              else if (pvName === model.owner.pvName) {
                expect(outcome).toBe('released');
                model.released = true;
              } else expect(outcome).toBe('other-owner');
            } else {
              const owner: VolumeOwner = {
                claimUid: `u${index}`,
                namespace: action.namespace,
                claimName: 'data',
                pvName: `pv${index}`,
                provisioner: 'example.com/test',
              };
              const outcome = await root
                .createVolume(path, { owner, mode: 0o777, adopt: action.adopt })
                .catch((err: unknown) => (isSafeFsError(err) ? err.kind : err));
              const expected =
                model === undefined
                  ? 'created'
                  : action.adopt && model.released && model.owner.namespace === action.namespace
                    ? 'adopted'
                    : 'ownership';
              expect(outcome).toBe(expected);
              if (outcome === 'adopted') reattached++;
              if (outcome !== 'ownership') model = { owner, released: false };
            }
            const record = await root.readRecord(path);
            expect(record?.claimUid).toBe(model?.owner.claimUid);
            expect(record?.releasedAt !== undefined).toBe(model?.released ?? false);
          }
        },
      ),
      // A hand-over needs create, release by its own PV, then an adopting create in the same
      // namespace: at 100 runs fewer than 3 came up in about 1 % of seeds, at 300 the median is ~24.
      { numRuns: 300 },
    );
    expect(reattached).toBeGreaterThan(2);
  });
});
