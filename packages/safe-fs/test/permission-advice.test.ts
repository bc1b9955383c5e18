import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPersistentRefusal, SafeFsError, systemError } from '../src/errors.ts';
import { checkWritableDirectory, explainPermissionError, permissionFix } from '../src/permission-advice.ts';

const identity = `uid ${process.getuid?.()}, gid ${process.getgid?.()}`;
const denied = (code: 'EACCES' | 'EPERM', extra: object = {}): Error =>
  Object.assign(new Error(`${code}: denied`), { code, errno: code === 'EACCES' ? -13 : -1, ...extra });

describe('explainPermissionError', () => {
  it('keeps the operation, relative path and errno of a refusal and adds the root, the identity and the fix', () => {
    const explained = explainPermissionError(
      systemError(denied('EACCES'), 'mkdir', 'team-a'),
      '/persistentvolumes',
    );
    expect(explained).toBeInstanceOf(SafeFsError);
    const error = explained as SafeFsError;
    expect(error.message).toBe(
      `mkdir "team-a": permission denied (EACCES) in /persistentvolumes as ${identity}; ${permissionFix}`,
    );
    expect([error.kind, error.path, error.errno]).toEqual(['permission', 'team-a', 'EACCES']);
    expect(isPersistentRefusal(error)).toBe(true);
  });

  it('names the path below the root of a raw EPERM system error', () => {
    const raw = denied('EPERM', { syscall: 'open', path: '/srv/export/ns-claim/.tmp-123' });
    const error = explainPermissionError(raw, '/srv/export') as SafeFsError;
    expect(error.message).toMatch(
      /^open "ns-claim\/\.tmp-123": operation not permitted \(EPERM\) in \/srv\/export /u,
    );
    expect(error.message).toContain('securityContext.fsGroup');
  });

  it('returns any other error unchanged', () => {
    const io = systemError(Object.assign(new Error('EIO'), { code: 'EIO', errno: -5 }), 'mkdir', 'x');
    expect(explainPermissionError(io, '/root')).toBe(io);
    const plain = new Error('boom');
    expect(explainPermissionError(plain, '/root')).toBe(plain);
  });
});

describe('checkWritableDirectory', () => {
  it('resolves for a directory this process may write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'writable-'));
    try {
      await expect(checkWritableDirectory(dir)).resolves.toBeUndefined();
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('names the directory, the errno and the fix when access is refused', async () => {
    const probe = (): Promise<void> => Promise.reject(denied('EACCES'));
    await expect(checkWritableDirectory('/persistentvolumes', probe)).rejects.toThrow(
      `/persistentvolumes is not writable by ${identity}: permission denied (EACCES); ${permissionFix}`,
    );
  });

  it('names the errno without a permission fix for a missing directory', async () => {
    const missing = join(tmpdir(), 'does-not-exist-writable-check');
    await expect(checkWritableDirectory(missing)).rejects.toThrow(
      new RegExp(`^${missing} is not writable by uid .*: no such file or directory \\(ENOENT\\)$`, 'u'),
    );
  });
});
