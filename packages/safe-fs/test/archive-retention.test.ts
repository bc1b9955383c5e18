import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const hour = 3_600_000;

/** A root whose clock the test moves. */
function rootAt(base: string, clock: { now: number }): VolumeRoot {
  return new VolumeRoot(base, { now: () => clock.now });
}

async function archived(
  root: VolumeRoot,
  target: string,
  uid: string,
  retentionMs?: number,
): Promise<string> {
  const [namespace = '', name = ''] = target.split('/');
  await root.createVolume(path(target), { owner: ownerOf(namespace, name, uid), mode: 0o777 });
  const result = await root.archiveVolume(path(target), { pvName: `pvc-${uid}`, retentionMs });
  if (result.outcome !== 'archived') throw new Error('not archived');
  return result.archivedPath;
}

describe('archive retention', () => {
  it('records when an archive was made and when it expires', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);

    const archive = await archived(root, 'ns/data', 'u1', 720 * hour);

    expect(await root.readRecord(path(archive))).toMatchObject({
      claimUid: 'u1',
      archivedAt: '2026-11-01T00:00:00.000Z',
      expiresAt: '2026-12-01T00:00:00.000Z',
    });
  });

  it('removes an archive once it has expired, and not a moment before', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    const archive = await archived(root, 'ns/data', 'u1', 2 * hour);

    clock.now += 2 * hour - 1;
    const early = await root.removeExpiredArchives();
    clock.now += 1;
    const due = await root.removeExpiredArchives();

    expect(early).toEqual({ removed: [], kept: 1, nextExpiry: '2026-11-01T02:00:00.000Z', failed: [] });
    expect(due).toEqual({ removed: [archive], kept: 0, nextExpiry: undefined, failed: [] });
    // The archive, its record and the parent it left empty are gone.
    expect(await readdir(base)).toEqual([]);
  });

  it('sizes an expired archive right before its removal, and the kept ones after the removals', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    const kept = await archived(root, 'ns/kept', 'u1');
    const expired = await archived(root, 'ns/old', 'u2', hour);
    clock.now += hour;
    const present = (archive: string) => existsSync(join(base, archive));
    const measured: string[] = [];

    const report = await root.removeExpiredArchives({
      measure: async (archive) => {
        measured.push(`${archive}, expired one present: ${present(expired)}`);
        return archive === expired ? 300 : 20;
      },
    });

    expect(measured).toEqual([
      `${expired}, expired one present: true`,
      `${kept}, expired one present: false`,
    ]);
    expect(report).toMatchObject({ removed: [expired], kept: 1, bytes: { kept: 20, removed: 300 } });
  });

  it('keeps archives without retention, archives without a record, and volumes', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    const forever = await archived(root, 'ns/kept', 'u1');
    await mkdir(join(base, 'archived-upstream-pvc-0b5e5b3c-5d3b-4c1e-9a55-0c6f3c2d9e11'));
    await root.createVolume(path('ns/live'), { owner: ownerOf('ns', 'live', 'u2'), mode: 0o777 });
    clock.now += 10_000 * hour;

    const report = await root.removeExpiredArchives();

    expect(report).toEqual({ removed: [], kept: 1, nextExpiry: undefined, failed: [] });
    expect((await readdir(base)).sort()).toEqual([
      'archived-upstream-pvc-0b5e5b3c-5d3b-4c1e-9a55-0c6f3c2d9e11',
      'ns',
    ]);
    expect((await readdir(join(base, 'ns'))).sort()).toEqual(
      [
        '.kube-provisioner-parent.json',
        `.${forever.split('/')[1]}.kube-provisioner.json`,
        '.live.kube-provisioner.json',
        forever.split('/')[1],
        'live',
      ].sort(),
    );
  });

  it('never enters a volume: an archive-like tree a tenant made inside one stays', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    await root.createVolume(path('ns/live'), { owner: ownerOf('ns', 'live', 'u2'), mode: 0o777 });
    const inside = join(base, 'ns/live');
    await mkdir(join(inside, 'archived-x'));
    const forged = {
      ...ownerOf('ns', 'x', 'u9'),
      createdAt: '2020-01-01T00:00:00Z',
      expiresAt: '2020-01-02T00:00:00Z',
    };
    await writeFile(join(inside, '.archived-x.kube-provisioner.json'), JSON.stringify(forged));
    await writeFile(join(inside, 'archived-x', 'data'), 'tenant data');

    const report = await root.removeExpiredArchives();

    expect(report.removed).toEqual([]);
    expect(await readFile(join(inside, 'archived-x', 'data'), 'utf8')).toBe('tenant data');
  });

  it('removes an expired archive without following a link planted in it', async () => {
    const base = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'precious'), 'outside the root');
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    await root.createVolume(path('ns/data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    await symlink(outside, join(base, 'ns/data/link'));
    await root.archiveVolume(path('ns/data'), { pvName: 'pvc-u1', retentionMs: hour });
    clock.now += hour;

    expect((await root.removeExpiredArchives()).removed).toEqual(['ns/archived-data']);
    expect(await readFile(join(outside, 'precious'), 'utf8')).toBe('outside the root');
  });

  it('stops at the first write when the leadership term has ended, removing nothing', async () => {
    const base = await tempDir();
    const clock = { now: Date.parse('2026-11-01T00:00:00Z') };
    const root = rootAt(base, clock);
    const archive = await archived(root, 'ns/data', 'u1', hour);
    clock.now += hour;
    const lost = new Error('not leading');

    await expect(
      root.removeExpiredArchives({
        beforeEachWrite: () => {
          throw lost;
        },
      }),
    ).rejects.toBe(lost);
    expect(await root.readRecord(path(archive))).toMatchObject({ claimUid: 'u1' });
  });

  it('refuses a negative or fractional retention', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns/data'), { owner: ownerOf('ns', 'data', 'u1'), mode: 0o777 });
    await expect(root.archiveVolume(path('ns/data'), { pvName: 'pvc-u1', retentionMs: -1 })).rejects.toThrow(
      RangeError,
    );
    expect(await readdir(join(base, 'ns'))).toContain('data');
  });
});
