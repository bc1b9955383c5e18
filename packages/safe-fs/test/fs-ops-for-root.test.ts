import type { StatsFs, statfsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fsOpsForRoot, localFsOps, nodeFsOps } from '../src/index.ts';
import { systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

function statfsOfType(type: number): typeof statfsSync {
  return (() => ({ type }) as StatsFs) as unknown as typeof statfsSync;
}

describe('fsOpsForRoot', () => {
  it.each([
    { magic: 0xef53, fileSystem: 'ext4', calls: 'local', ops: localFsOps },
    { magic: 0x58465342, fileSystem: 'xfs', calls: 'local', ops: localFsOps },
    { magic: 0x6969, fileSystem: '0x6969', calls: 'thread-pool', ops: nodeFsOps },
    { magic: 0x65735546, fileSystem: '0x65735546', calls: 'thread-pool', ops: nodeFsOps },
  ])(
    'makes $fileSystem calls $calls (local file systems on the event loop, NFS and unknown ones on the pool)',
    ({ magic, ...expected }) => {
      expect(fsOpsForRoot('/', statfsOfType(magic))).toEqual(expected);
    },
  );

  it('keeps them on the thread pool when the root cannot be examined', () => {
    const missing = (() => {
      throw systemErrorOf('ENOENT', -2, 'statfs');
    }) as unknown as typeof statfsSync;
    expect(fsOpsForRoot('/nowhere', missing)).toEqual({
      ops: nodeFsOps,
      calls: 'thread-pool',
      fileSystem: 'unknown (ENOENT)',
    });
  });

  it('reads the real file system of a directory', async () => {
    const root = fsOpsForRoot(await tempDir());
    expect(root.fileSystem).not.toMatch(/^unknown/);
  });
});
