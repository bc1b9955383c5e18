import { describe, expect, it } from 'vitest';
import type { SafeFsErrorKind } from '../src/index.ts';
import { isPermissionError, isPersistentRefusal, isSafeFsError, SafeFsError } from '../src/index.ts';
import { systemErrorOf } from './fixtures.ts';

describe('isPermissionError', () => {
  it.each([
    ['a raw EACCES', systemErrorOf('EACCES', -13, 'mkdir'), true],
    ['a raw EPERM', systemErrorOf('EPERM', -1, 'chown'), true],
    ['a raw ENOENT', systemErrorOf('ENOENT', -2, 'open'), false],
    ['a plain Error', new Error('EACCES'), false],
    ['a string', 'EACCES', false],
    ['undefined', undefined, false],
    [
      'a SafeFsError of kind permission',
      new SafeFsError({ kind: 'permission', path: 'a', operation: 'mkdir', detail: 'x', errno: 'EACCES' }),
      true,
    ],
    [
      'a SafeFsError of kind symlink',
      new SafeFsError({ kind: 'symlink', path: 'a', operation: 'open', detail: 'x', errno: 'ENOTDIR' }),
      false,
    ],
  ])('%s → %s', (_label, err, expected) => {
    expect(isPermissionError(err)).toBe(expected);
  });

  it('recognises errors branded by another copy of the package', () => {
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('@kube-provisioner/safe-fs/SafeFsError')]: true,
      kind: 'permission',
    });
    expect(isSafeFsError(foreign)).toBe(true);
    expect(isPermissionError(foreign)).toBe(true);
  });
});

describe('isPersistentRefusal', () => {
  const refusal = (kind: SafeFsErrorKind) =>
    new SafeFsError({ kind, path: 'a', operation: 'mkdir', detail: 'x' });

  it.each([
    ['invalid-path', true],
    ['permission', true],
    ['symlink', false],
    ['not-a-directory', false],
    ['ownership', false],
    ['io', false],
  ] as const)('a SafeFsError of kind %s → %s', (kind, expected) => {
    expect(isPersistentRefusal(refusal(kind))).toBe(expected);
  });

  it('holds only for SafeFsErrors, not raw system errors', () => {
    expect(isPersistentRefusal(systemErrorOf('EACCES', -13, 'mkdir'))).toBe(false);
    expect(isPersistentRefusal(undefined)).toBe(false);
  });
});
