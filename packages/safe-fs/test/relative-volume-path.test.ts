import { describe, expect, it } from 'vitest';
import { isSafeFsError, parseRelativeVolumePath } from '../src/index.ts';

function refusal(input: string): string {
  try {
    parseRelativeVolumePath(input);
  } catch (err) {
    if (isSafeFsError(err) && err.kind === 'invalid-path' && err.path === input) return err.message;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('parseRelativeVolumePath', () => {
  it.each([
    'data',
    'ns1-data-pvc-1',
    'ns1/data',
    'a/b/c/d',
    '.hidden',
    '...',
    'a..b',
    'ünïcödé/データ',
    'emoji-😀',
    'x'.repeat(255),
    `${'a'.repeat(200)}/${'b'.repeat(200)}`,
  ])('accepts %j unchanged', (input) => {
    expect(parseRelativeVolumePath(input)).toBe(input);
  });

  it.each([
    ['', 'it is empty'],
    ['a//b', 'it has an empty segment'],
    ['a/', 'it has an empty segment'],
    ['/etc', 'it is absolute'],
    ['/', 'it is absolute'],
    ['.', 'it has a "." segment'],
    ['./a', 'it has a "." segment'],
    ['a/./b', 'it has a "." segment'],
    ['..', 'it has a ".." segment'],
    ['../../x', 'it has a ".." segment'],
    ['a/../../b', 'it has a ".." segment'],
    ['ns/name/../../ns2/pvc2', 'it has a ".." segment'],
    ['a\\..\\b', 'it contains a backslash'],
    ['a\u0000b', 'it contains a NUL character'],
    ['a\nb', 'it contains a control character'],
    ['a\u007fb', 'it contains a control character'],
    ['a\u0085b', 'it contains a control character'],
    ['a\u009bb', 'it contains a control character'],
    ['a\ud800b', 'it is not well-formed Unicode'],
    ['x'.repeat(256), 'it has a segment longer than 255 bytes'],
    ['é'.repeat(128), 'it has a segment longer than 255 bytes'],
    [Array.from({ length: 20 }, () => 'y'.repeat(250)).join('/'), 'it is longer than 4096 bytes'],
    ['.data.kube-provisioner.json', 'is reserved for ownership records'],
    ['ns1/.kube-provisioner-parent.json', 'is reserved for ownership records'],
  ])('refuses %j: %s', (input, reason) => {
    expect(refusal(input)).toContain(reason);
  });
});
