// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal `${…}` text.
import { lstat, readdir, realpath, symlink } from 'node:fs/promises';
import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSafeFsError,
  joinBasePath,
  type PathPatternValues,
  type RelativeVolumePath,
  resolveVolumePath,
  VolumeRoot,
} from '../src/index.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

/** Hostile and ordinary metadata values: traversal, separators, unicode, lone surrogates, very long. */
const value: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '/',
    '//',
    'a/../../b',
    '../../x',
    '/etc',
    'escape',
    'escape/x',
    '\\..\\x',
    'a\u0000b',
  ),
  fc.constantFrom('ns/name/../../ns2/pvc2', '.data.kube-provisioner.json', 'ünï/データ', '😀', 'a\nb'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({
    unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
    maxLength: 3,
  }),
  fc.string({ unit: fc.constantFrom('a', 'é', '/', '.'), minLength: 200, maxLength: 600 }),
);

const key: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'a',
    'app.kubernetes.io/name',
    'nfs.io/storage-path',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string({ maxLength: 10 }),
);

const values: fc.Arbitrary<PathPatternValues> = fc.record({
  claim: fc.record({
    namespace: value,
    name: value,
    labels: fc.option(fc.dictionary(key, value, { maxKeys: 4 }), { nil: undefined }),
    annotations: fc.option(fc.dictionary(key, value, { maxKeys: 4 }), { nil: undefined }),
  }),
  pvName: fc.oneof(fc.constant('pvc-0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f'), value),
});

const piece = fc.constantFrom(
  '${.PVC.namespace}',
  '${.PVC.name}',
  '${.PVC.labels.a}',
  '${.PVC.labels.app.kubernetes.io/name}',
  '${.PVC.annotations.nfs.io/storage-path}',
  '${.PVC.annotations.__proto__}',
  '${.PVC.unknown}',
  '${.PV.name}',
  '/',
  '-',
  '.',
  '..',
  'lit',
);
const pattern: fc.Arbitrary<string | undefined> = fc.option(
  fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join('')),
  { nil: undefined },
);
const fallback: fc.Arbitrary<string> = fc.oneof(fc.constant('ns-pvc-pv'), value);

/** Resolves, or returns the refusal after checking it is a clear `invalid-path` error. */
function resolveOrRefusal(
  p: string | undefined,
  v: PathPatternValues,
  f: string,
): RelativeVolumePath | undefined {
  try {
    return resolveVolumePath(p, v, f);
  } catch (err) {
    expect(isSafeFsError(err)).toBe(true);
    if (!isSafeFsError(err)) throw err;
    expect(err.kind).toBe('invalid-path');
    expect(err.message).toMatch(/^validate path ".*": its? \S/s);
    return undefined;
  }
}

describe('path containment over generated claim metadata', () => {
  it('every resolved path stays strictly below the root, unchanged by normalisation, or is refused', () => {
    const base = '/persistentvolumes';
    fc.assert(
      fc.property(pattern, values, fallback, (p, v, f) => {
        const resolved = resolveOrRefusal(p, v, f);
        if (resolved === undefined) return;
        const absolute = joinBasePath(base, resolved);
        expect(posix.resolve(base, resolved)).toBe(absolute);
        expect(absolute.startsWith(`${base}/`)).toBe(true);
        expect(resolved.split('/')).not.toContain('..');
      }),
      { numRuns: 500 },
    );
  });

  it('creating the resolved volume never writes outside the root, even past a planted symlink', async () => {
    const base = await realpath(await tempDir());
    const outside = await tempDir();
    await symlink(outside, `${base}/escape`);
    const root = new VolumeRoot(base);
    let uid = 0;
    let created = 0;

    await fc.assert(
      fc.asyncProperty(pattern, values, fallback, async (p, v, f) => {
        const resolved = resolveOrRefusal(p, v, f);
        if (resolved === undefined) return;
        uid++;
        const owner = {
          claimUid: `u${uid}`,
          namespace: v.claim.namespace,
          claimName: v.claim.name,
          pvName: `pv${uid}`,
          provisioner: 'example.com/test',
        };
        const outcome = await root.createVolume(resolved, { owner, mode: 0o777 }).catch((err: unknown) => {
          expect(isSafeFsError(err)).toBe(true);
          return err;
        });
        if (outcome === 'created') {
          created++;
          const real = await realpath(joinBasePath(base, resolved));
          expect(real.startsWith(`${base}/`)).toBe(true);
          expect((await lstat(real)).isDirectory()).toBe(true);
        }
        expect(await readdir(outside)).toEqual([]);
      }),
      { numRuns: 150 },
    );
    // The property is not vacuous: plenty of generated claims did get a directory.
    expect(created).toBeGreaterThan(10);
  });
});
