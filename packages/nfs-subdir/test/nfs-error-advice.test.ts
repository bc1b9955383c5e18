import type { statfsSync } from 'node:fs';
import { SafeFsError, type SafeFsErrorKind } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { explainNfsError, isHeldOpenFile, rootSquashFix } from '../src/nfs-error-advice.ts';

const refusal = (kind: SafeFsErrorKind, errno: string, path = 'team-a', operation = 'mkdir'): SafeFsError =>
  new SafeFsError({ kind, path, operation, detail: `refused (${errno})`, errno });
const fileSystem = (type: number) => (() => ({ type })) as unknown as typeof statfsSync;
const nfs = fileSystem(0x6969);
const ext4 = fileSystem(0xef53);

describe('explainNfsError', () => {
  it('says root_squash and the export options when root is refused on an NFS mount', () => {
    const denied = refusal('permission', 'EACCES');
    const explained = explainNfsError(denied, '/persistentvolumes', 0, nfs) as SafeFsError;
    expect(explained?.message).toBe(
      `mkdir "team-a": refused (EACCES): root is refused on the NFS mount /persistentvolumes, so the export squashes root (root_squash) and the server runs this provisioner's requests as its anonymous user; ${rootSquashFix}`,
    );
    expect([explained?.kind, explained?.path, explained?.errno]).toEqual(['permission', 'team-a', 'EACCES']);
    expect(explained?.cause).toBe(denied);
  });

  it('leaves a refusal of another user, or on another file system, to the generic advice', () => {
    expect(explainNfsError(refusal('permission', 'EACCES'), '/pv', 1000, nfs)).toBeUndefined();
    expect(explainNfsError(refusal('permission', 'EACCES'), '/pv', 0, ext4)).toBeUndefined();
    const unreadable = (() => {
      throw new Error('ENOENT');
    }) as unknown as typeof statfsSync;
    expect(explainNfsError(refusal('permission', 'EACCES'), '/pv', 0, unreadable)).toBeUndefined();
  });

  it('names a silly-renamed file held open, only for the names the NFS client gives them', () => {
    const held = refusal('io', 'EBUSY', 'ns-data-pvc-1/.nfs00000000009fc2c200000001', 'unlink');
    expect(explainNfsError(held, '/pv', 0, nfs)?.message).toMatch(
      /^unlink "ns-data-pvc-1\/\.nfs00000000009fc2c200000001": refused \(EBUSY\): a process using this NFS client still holds the file open, .*silly rename.*completes once the file is closed$/u,
    );
    expect(explainNfsError(refusal('io', 'EBUSY', 'ns-data-pvc-1/mount-point', 'rmdir'), '/pv', 0, nfs)).toBe(
      undefined,
    );
    expect(isHeldOpenFile(held)).toBe(true);
    expect(isHeldOpenFile(refusal('io', 'EBUSY', 'ns-data-pvc-1/mount-point', 'rmdir'))).toBe(false);
    expect(isHeldOpenFile(refusal('io', 'EIO', 'ns-data-pvc-1/.nfs0001', 'unlink'))).toBe(false);
  });

  it('says a read-only export and a full one, whoever runs it', () => {
    expect(explainNfsError(refusal('io', 'EROFS'), '/pv', 1000, ext4)?.message).toContain(
      'the export is read-only (exported ro, or mounted ro at /pv)',
    );
    for (const errno of ['ENOSPC', 'EDQUOT']) {
      expect(explainNfsError(refusal('io', errno), '/pv', 0, nfs)?.message).toContain(
        'the export is full or a quota is exhausted (over NFS this shows when data is flushed, at fsync or close)',
      );
    }
  });

  it('names the directory of a temporary record, whose own name changes on every attempt', () => {
    const full = refusal('io', 'ENOSPC', 'team-a/.kube-provisioner.tmp.abc-1-2.0b6e', 'open');
    const explained = explainNfsError(full, '/pv', 0, nfs) as SafeFsError;
    expect(explained?.message).toMatch(
      /^open a temporary record in "team-a": refused \(ENOSPC\): the export is full/u,
    );
    expect(explained?.path).toBe('team-a');
    const atRoot = refusal('permission', 'EACCES', '.kube-provisioner.tmp.abc-1-2.0b6e', 'open');
    expect(explainNfsError(atRoot, '/pv', 0, nfs)?.message).toMatch(/^open a temporary record in "\.": /u);
  });

  it('explains a system error of a call that names no path, such as the fdatasync of a record', () => {
    const raw = Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'fdatasync',
    });
    const explained = explainNfsError(raw, '/pv', 0, nfs);
    expect(explained?.message).toMatch(/^fdatasync: no space left on device \(ENOSPC\): the export is full/u);
    expect(explained?.cause).toBe(raw);
    expect(explainNfsError(Object.assign(new Error('EIO'), { code: 'EIO', errno: -5 }), '/pv', 0, nfs)).toBe(
      undefined,
    );
  });

  it('returns undefined for other errors', () => {
    expect(explainNfsError(refusal('io', 'EIO'), '/pv', 0, nfs)).toBeUndefined();
    expect(explainNfsError(new Error('plain'), '/pv', 0, nfs)).toBeUndefined();
  });
});
