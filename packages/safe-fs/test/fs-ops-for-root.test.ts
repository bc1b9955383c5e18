import type { StatsFs, statfsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fsOpsForRoot, localFsOps, nodeFsOps } from '../src/index.ts';
import { systemErrorOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();

function statfsOfType(type: number): typeof statfsSync {
  return (() => ({ type }) as StatsFs) as unknown as typeof statfsSync;
}

describe('fsOpsForRoot', () => {
  it('makes the calls on the event loop thread on a local file system', () => {
    expect(fsOpsForRoot('/', statfsOfType(0xef53))).toEqual({
      ops: localFsOps,
      calls: 'local',
      fileSystem: 'ext4',
    });
    expect(fsOpsForRoot('/', statfsOfType(0x58465342)).calls).toBe('local');
  });

  it('keeps them on the thread pool on NFS or any file system it does not know', () => {
    expect(fsOpsForRoot('/', statfsOfType(0x6969))).toEqual({
      ops: nodeFsOps,
      calls: 'thread-pool',
      fileSystem: '0x6969',
    });
    expect(fsOpsForRoot('/', statfsOfType(0x65735546)).calls).toBe('thread-pool');
  });

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
