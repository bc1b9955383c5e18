// The searches for records (take-back, retention, the start-up sweep), the check whether a recordless
// directory is a parent this package made, and the guards of create, clone and parent removal look
// into directories a tenant may have filled: an unrecorded (upstream-era) volume, with a parent
// marker planted in it, or a directory swapped in. None may hold more than a batch of a level's
// names. Walks are measured as in `wide-directory-memory.test.ts` (live heap after a full
// collection, sampled from inside their own calls); guards that make few calls by the largest
// listing any single call hands them.
import { existsSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneVolume } from '../src/clone-volume.ts';
import { openBase } from '../src/directory-handle.ts';
import { listingBatch } from '../src/directory-stream.ts';
import { type FsOps, localFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { removeCreatedParent } from '../src/parent-chain.ts';
import { findVolumesOfPv } from '../src/recorded-volume-search.ts';
import { parentMarkerName } from '../src/reserved-names.ts';
import type { VolumeContext } from '../src/volume-context.ts';
import { refuseParentAsVolume } from '../src/volume-like.ts';
import { ownerOf, rejection } from './fixtures.ts';
import { fillEmptyFiles, heapSampling, scratchDirectory } from './support/walk-probes.ts';

const entries = 100_000;
const sampleEvery = 10_000;
// A walk that listed a level whole holds it while it looks at the level's first names.
const sampleFirst = 32;
// 100 000 names of 155 bytes are ~16 MiB however they are held; a batch of them is ~40 KiB.
const bound = 4 * 2 ** 20;
const path = parseRelativeVolumePath;

let scratch: string;

beforeAll(async () => {
  scratch = await scratchDirectory();
});
// Removing a few hundred thousand files takes longer than vitest's 10 s hook default on a loaded machine.
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
}, 120_000);

/** Creates {@link entries} empty files with long names in `dir`. */
async function fill(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  fillEmptyFiles(dir, entries);
}

const measuring = () => heapSampling(sampleEvery, sampleFirst);

function contextOf(base: string, fs: FsOps): VolumeContext {
  return { fs, base, now: Date.now, touch: async () => undefined };
}

describe(`an unrecorded volume of ${entries} empty files with a parent marker planted in it (flat pattern)`, () => {
  let base: string;

  beforeAll(async () => {
    base = await mkdtemp(join(scratch, 'base-'));
    await fill(join(base, 'ns-upstream-data'));
    writeFileSync(join(base, 'ns-upstream-data', parentMarkerName), '{}');
  }, 120_000);

  it('is refused by a delete, which holds a bounded number of its names', { timeout: 120_000 }, async () => {
    const { fs, growth } = measuring();
    const root = new VolumeRoot(base, { fs });
    const error = await rejection(root.deleteVolume(path('ns-upstream-data'), { pvName: 'pv-upstream' }));
    expect(error.message).toContain('parent marker');
    expect(growth()).toBeLessThan(bound);
    expect((await readdir(join(base, 'ns-upstream-data'))).length).toBe(entries + 1);
  });

  it('is searched for records by a take-back holding a bounded number of its names', {
    timeout: 120_000,
  }, async () => {
    const { fs, growth } = measuring();
    expect(await findVolumesOfPv(contextOf(base, fs), 'pv-old', 4)).toEqual([]);
    expect(growth()).toBeLessThan(bound);
  });

  it('is searched for archives by retention holding a bounded number of its names', {
    timeout: 120_000,
  }, async () => {
    const { fs, growth } = measuring();
    const report = await new VolumeRoot(base, { fs }).removeExpiredArchives();
    expect(report).toMatchObject({ removed: [], kept: 0, failed: [] });
    expect(growth()).toBeLessThan(bound);
  });

  it('is swept for temporary records holding a bounded number of its names', {
    timeout: 120_000,
  }, async () => {
    const { fs, growth } = measuring();
    expect(await new VolumeRoot(base, { fs }).sweepTemporaryFiles()).toEqual({ removed: [], kept: [] });
    expect(growth()).toBeLessThan(bound);
  });
});

describe(`guards looking into a directory of ${entries} entries list at most a batch at once`, () => {
  let wide: string;

  beforeAll(async () => {
    wide = join(scratch, 'wide');
    await fill(wide);
  }, 120_000);

  it('taking an existing directory for a volume (clone source, adoption, take-back)', async () => {
    const { fs, largestListing } = measuring();
    const dir = await openBase(fs, wide);
    try {
      await refuseParentAsVolume(dir);
    } finally {
      await dir.close();
    }
    expect(largestListing()).toBeLessThanOrEqual(listingBatch);
  });

  it('removing a parent this package made', async () => {
    const { fs, largestListing } = measuring();
    const parent = await openBase(fs, scratch);
    const dir = await parent.openDirectory('wide');
    try {
      expect(await removeCreatedParent(parent, dir as NonNullable<typeof dir>, 'wide')).toBe(false);
    } finally {
      await dir?.close();
      await parent.close();
    }
    expect(largestListing()).toBeLessThanOrEqual(listingBatch);
  });

  it('checking that a directory just made was not swapped', { timeout: 60_000 }, async () => {
    const { fs, largestListing } = measuring();
    const base = await mkdtemp(join(scratch, 'base-'));
    const swapping: FsOps = {
      ...fs,
      mkdir: async (at, mode) => {
        await fs.mkdir(at, mode);
        if (at.toString().endsWith('/data')) await rename(wide, join(base, 'ns/data'));
      },
    };
    try {
      const error = await rejection(
        new VolumeRoot(base, { fs: swapping }).createVolume(path('ns/data'), {
          owner: ownerOf('ns', 'data', 'u1'),
          mode: 0o777,
        }),
      );
      expect(error.message).toContain('was replaced');
      expect(largestListing()).toBeLessThanOrEqual(listingBatch);
    } finally {
      await rename(join(base, 'ns/data'), wide);
    }
  });

  it('resuming a clone whose copy was complete', { timeout: 60_000 }, async () => {
    const base = await mkdtemp(join(scratch, 'base-'));
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns/src'), { owner: ownerOf('ns', 'src', 'src'), mode: 0o777 });
    const request = { owner: ownerOf('ns', 'copy', 'copy'), mode: 0o777, sourcePvName: 'pvc-src' };
    await cloneVolume(contextOf(base, localFsOps), path('ns/src'), path('ns/copy'), request);
    await rm(join(base, 'ns/copy'), { recursive: true });
    await rename(wide, join(base, 'ns/copy'));
    const { fs, largestListing } = measuring();
    try {
      const progress = await cloneVolume(contextOf(base, fs), path('ns/src'), path('ns/copy'), request);
      expect(progress).toMatchObject({ entries });
      expect(largestListing()).toBeLessThanOrEqual(listingBatch);
    } finally {
      await rename(join(base, 'ns/copy'), wide);
    }
  });
});

/**
 * `localFsOps` listing every directory with the names starting with `.` (records, markers) after all
 * others, in batches as asked: a volume's record then comes in another batch than the volume, which
 * the order of a real file system only sometimes does.
 */
const recordsLast: FsOps = {
  ...localFsOps,
  opendir: async (at, batchSize) => {
    const listing = await localFsOps.opendir(at, batchSize);
    const names: Buffer[] = [];
    try {
      for (let batch = await listing.read(); batch.length > 0; batch = await listing.read())
        names.push(...batch);
    } finally {
      await listing.close();
    }
    names.sort((a, b) => Number(a[0] === 0x2e) - Number(b[0] === 0x2e));
    return { read: async () => names.splice(0, batchSize), close: async () => undefined };
  },
};

describe('a parent of more volumes than one batch holds, their records in other batches', () => {
  // 300 volumes, 300 records and a marker: a level read in three batches, and every record found by
  // name rather than in its volume's batch.
  const volumes = 300;
  let base: string;

  beforeAll(async () => {
    base = await mkdtemp(join(scratch, 'base-'));
    const root = new VolumeRoot(base);
    for (let index = 0; index < volumes; index++) {
      await root.createVolume(path(`team/v${index}`), {
        owner: ownerOf('ns', `v${index}`, `u${index}`),
        mode: 0o777,
      });
    }
    await root.archiveVolume(path('team/v7'), { pvName: 'pvc-u7', retentionMs: 0 });
  }, 60_000);

  it('is a parent this package made, whose delete finds it missing and leaves it', async () => {
    const root = new VolumeRoot(base, { fs: recordsLast });
    await expect(root.deleteVolume(path('team'), { pvName: 'pv-team' })).resolves.toBe('missing');
    expect((await readdir(join(base, 'team'))).length).toBe(2 * volumes + 1);
  });

  it('is searched without entering its volumes, and its leftovers are swept', async () => {
    const leftover = '.kube-provisioner.tmp.elsewhere.0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f';
    writeFileSync(join(base, 'team', leftover), '{}');
    // Tenants' copies of a record and of a leftover inside their volumes: a walk that took a volume
    // for a parent would sweep the one and believe the other.
    const planted = join(base, 'team/v3', leftover);
    for (let index = 0; index < volumes; index++) {
      if (index === 7) continue;
      writeFileSync(join(base, `team/v${index}`, leftover), '{}');
      symlinkSync(
        readlinkSync(join(base, 'team/.v5.kube-provisioner.json')),
        join(base, `team/v${index}/.v5.kube-provisioner.json`),
      );
    }
    const root = new VolumeRoot(base, { fs: recordsLast, now: () => Date.now() + 3_600_000 });
    expect(await root.sweepTemporaryFiles()).toEqual({ removed: [`team/${leftover}`], kept: [] });
    expect(existsSync(planted)).toBe(true);
    const found = await findVolumesOfPv(contextOf(base, recordsLast), 'pvc-u5', 4);
    expect(found.map((volume) => volume.path)).toEqual(['team/v5']);
  });

  it('has its expired archive removed by retention', async () => {
    const report = await new VolumeRoot(base, { fs: recordsLast }).removeExpiredArchives();
    expect(report.removed).toHaveLength(1);
    expect(report.removed[0]).toMatch(/^team\/archived-v7/u);
  });
});
