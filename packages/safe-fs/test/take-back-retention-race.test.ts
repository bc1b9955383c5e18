import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type FsOps,
  type FsPath,
  nodeFsOps,
  parseRelativeVolumePath,
  type TakeBackOptions,
  VolumeRoot,
} from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const hour = 3_600_000;
const start = Date.parse('2026-11-01T00:00:00Z');

/** A base holding the archive of claim `old` (PV `pvc-old`), with a file, expiring in an hour. */
async function archive(): Promise<{ base: string; where: string }> {
  const base = await tempDir();
  const root = new VolumeRoot(base, { now: () => start });
  await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'old'), mode: 0o777 });
  await writeFile(join(base, 'ns1/data/file'), 'kept');
  const result = await root.archiveVolume(path('ns1/data'), { pvName: 'pvc-old', retentionMs: hour });
  if (result.outcome !== 'archived') throw new Error('not archived');
  return { base, where: result.archivedPath };
}

function request(uid: string): TakeBackOptions {
  return { owner: ownerOf('ns1', 'new', uid), mode: 0o777, fromPvName: 'pvc-old' };
}

/**
 * File-system calls that stop at the first call `stopsAt` picks until `go` is called: a stall (an
 * NFS failover, a paused process) at exactly that point. `reached` resolves when it is hit.
 */
function stallAt(stopsAt: (call: string, target: FsPath) => boolean) {
  let go = () => {};
  const resumed = new Promise<void>((resolve) => {
    go = resolve;
  });
  let hit = () => {};
  const reached = new Promise<void>((resolve) => {
    hit = resolve;
  });
  let stalled = false;
  const stall = async (call: string, target: FsPath) => {
    if (stalled || !stopsAt(call, target)) return;
    stalled = true;
    hit();
    await resumed;
  };
  const fs: FsOps = {
    ...nodeFsOps,
    rename: async (from, to) => {
      await stall('rename', from);
      return nodeFsOps.rename(from, to);
    },
    symlink: async (text, target) => {
      await stall('symlink', target);
      return nodeFsOps.symlink(text, target);
    },
  };
  return { fs, reached, go };
}

describe('take-back and the retention sweep', () => {
  it('a take-back stalled past the expiry after its checks still gets the data: the sweep finds it held', async () => {
    const { base } = await archive();
    // Stalls right before the reservation lands (the lock renamed over the record).
    const { fs, reached, go } = stallAt((call, from) => call === 'rename' && String(from).endsWith('.lock'));
    const taking = new VolumeRoot(base, { fs, now: () => start }).takeBackVolume(
      path('ns1/new'),
      request('u2'),
    );
    await reached;

    const sweep = await new VolumeRoot(base, { now: () => start + 2 * hour }).removeExpiredArchives();
    go();

    expect(await taking).toMatchObject({ outcome: 'taken-back' });
    expect(sweep.removed).toEqual([]);
    expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
  });

  it('a sweep stalled after finding the archive expired reads it again and leaves it to the take-back', async () => {
    const { base, where } = await archive();
    // Stalls at the sweep's first write, after it listed the archive as expired.
    const { fs, reached, go } = stallAt((call) => call === 'symlink');
    const sweeping = new VolumeRoot(base, { fs, now: () => start + 2 * hour }).removeExpiredArchives();
    await reached;
    const root = new VolumeRoot(base, { now: () => start });
    // Reserved (a kill right after the reservation), then the sweep goes on.
    let writes = 0;
    await root
      .takeBackVolume(path('ns1/new'), {
        ...request('u2'),
        beforeEachWrite: () => {
          // The reservation is two writes: the lock's symlink, then its rename over the record.
          if (++writes > 2) throw new Error('stopped');
        },
      })
      .catch(() => undefined);
    expect((await root.readRecord(path(where)))?.takenFrom).toBe('pvc-old');
    go();
    const sweep = await sweeping;

    expect(sweep).toMatchObject({ removed: [], failed: [] });
    expect((await root.takeBackVolume(path('ns1/new'), request('u2'))).outcome).toBe('taken-back');
    expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
  });

  it('a reservation keeps the archive expiry, and the sweep leaves it while it is pending', async () => {
    const { base, where } = await archive();
    const root = new VolumeRoot(base, { now: () => start });
    let writes = 0;
    await root
      .takeBackVolume(path('ns1/new'), {
        ...request('u2'),
        beforeEachWrite: () => {
          // The reservation is two writes: the lock's symlink, then its rename over the record.
          if (++writes > 2) throw new Error('stopped');
        },
      })
      .catch(() => undefined);

    const reserved = await root.readRecord(path(where));
    const sweep = await new VolumeRoot(base, { now: () => start + 2 * hour }).removeExpiredArchives();

    expect(reserved).toMatchObject({
      claimUid: 'u2',
      takenFrom: 'pvc-old',
      expiresAt: '2026-11-01T01:00:00.000Z',
    });
    expect(sweep).toMatchObject({ removed: [], kept: 1, nextExpiry: undefined, failed: [] });
    expect(await readFile(join(base, where, 'file'), 'utf8')).toBe('kept');
  });
});
