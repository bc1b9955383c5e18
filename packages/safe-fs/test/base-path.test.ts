import { describe, expect, it } from 'vitest';
import {
  isSafeFsError,
  joinBasePath,
  normalizeBasePath,
  parseRelativeVolumePath,
  relativePathUnder,
} from '../src/index.ts';

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isSafeFsError(err) && err.kind === 'invalid-path') return err.message;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('normalizeBasePath', () => {
  it.each([
    ['/', '/'],
    ['//', '/'],
    ['/export', '/export'],
    ['/export/', '/export'],
    ['/export//sub', '/export/sub'],
    ['/export//sub///', '/export/sub'],
  ])('normalises %j to %j', (raw, normalised) => {
    expect(normalizeBasePath(raw)).toBe(normalised);
  });

  it.each([
    ['export', 'not absolute'],
    ['', 'not absolute'],
    ['/export/../etc', '".."'],
    ['/export/./x', '"."'],
    ['/ex\u0000port', 'NUL'],
  ])('refuses %j', (raw, reason) => {
    expect(reasonOf(() => normalizeBasePath(raw))).toContain(reason);
  });
});

describe('base path round trip (NFS_PATH variants)', () => {
  it.each(['/', '/export', '/export/', '/export//sub'])(
    'NFS_PATH %j maps a volume path out and back',
    (raw) => {
      const base = normalizeBasePath(raw);
      const volume = parseRelativeVolumePath('ns1/data');
      const absolute = joinBasePath(base, volume);
      expect(absolute).not.toContain('//');
      expect(absolute.endsWith('/ns1/data')).toBe(true);
      expect(relativePathUnder(base, absolute)).toBe('ns1/data');
    },
  );
});

describe('relativePathUnder (a path taken from a PV)', () => {
  it.each([
    ['/export', '/export/ns1-data-pvc-1', 'ns1-data-pvc-1'],
    ['/export', '/export/a/b', 'a/b'],
    ['/', '/top', 'top'],
  ])('under %j, %j is %j', (base, absolute, relative) => {
    expect(relativePathUnder(base, absolute)).toBe(relative);
  });

  it.each([
    ['/export', '/export/../etc', 'it has a ".." segment'],
    ['/export', '/export/a/../../etc', 'it has a ".." segment'],
    ['/export', '/export', 'itself'],
    ['/export', '/export/', 'itself'],
    ['/', '/', 'itself'],
    ['/export', '/exports/x', 'it is not below'],
    ['/export', '/etc/passwd', 'it is not below'],
    ['/export', 'export/x', 'it is not below'],
    ['/export', '/export//x', 'it has an empty segment'],
    ['/export', '/export/x/', 'it has an empty segment'],
  ])('under %j refuses %j: %s', (base, absolute, reason) => {
    const message = reasonOf(() => relativePathUnder(base, absolute));
    expect(message).toContain(reason);
    expect(message).toContain(JSON.stringify(absolute));
  });
});
