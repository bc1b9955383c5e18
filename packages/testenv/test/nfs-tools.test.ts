import { afterEach, describe, expect, it, vi } from 'vitest';
import { assertNfsTools, missingNfsPackages, NfsToolsMissingError } from '../src/nfs-tools.ts';
import { nfsToolsAvailable } from '../src/testing.ts';

describe('NFS tool detection', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('names the packages whose executables are not on PATH', () => {
    // The VFS plugin is found by library path, not PATH, so only its package's presence varies.
    expect(missingNfsPackages('')).toEqual(expect.arrayContaining(['nfs-ganesha', 'libnfs-utils']));
  });

  it('tells how to install what is missing', () => {
    expect(() => assertNfsTools('')).toThrow(NfsToolsMissingError);
    expect(() => assertNfsTools('')).toThrow(/apt-get install -y nfs-ganesha .*libnfs-utils/u);
  });

  it('fail NFS end-to-end tests in CI instead of skipping them', () => {
    expect(() => nfsToolsAvailable({ PATH: '', CI: 'true' })).toThrow(NfsToolsMissingError);
  });

  it('skip NFS end-to-end tests outside CI with a warning naming the packages', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(nfsToolsAvailable({ PATH: '' })).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('libnfs-utils'));
  });
});
