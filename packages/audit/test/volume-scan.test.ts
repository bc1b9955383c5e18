import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRelativeVolumePath, snapshotPath } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { isUpstreamVolumeName, scanVolumeRoot } from '../src/volume-scan.ts';
import { provisionDirectory, volumeRootDir } from './fixtures.ts';

const uid = '0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f';

describe('scanVolumeRoot', () => {
  it('finds recorded volumes, flat and nested, with their records, and does not enter them', async () => {
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'team-a-db-pvc-1', 'pvc-1');
    await provisionDirectory(root, 'team-a/deep/data', 'pvc-2');
    // A workload's own data inside a volume is never taken for a volume.
    await mkdir(join(dir, 'team-a-db-pvc-1', `x-pvc-${uid}`));

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set() });

    expect(scan.volumes.map((volume) => [volume.path, volume.record?.pvName])).toEqual([
      ['team-a-db-pvc-1', 'pvc-1'],
      ['team-a/deep/data', 'pvc-2'],
    ]);
    expect(scan.leftovers).toEqual([]);
    expect(scan.unreadable).toEqual([]);
  });

  it('takes the snapshot area for neither a volume nor a leftover', async () => {
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'team-a/data', 'pvc-1');
    await root.createVolume(snapshotPath('team-a', uid), {
      owner: {
        claimUid: uid,
        namespace: 'team-a',
        claimName: 'snap',
        pvName: `snapshot-${uid}`,
        provisioner: 'p',
      },
      mode: 0o700,
    });

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set() });

    expect(scan.volumes.map((volume) => volume.path)).toEqual(['team-a/data']);
    expect(scan.leftovers).toEqual([]);
  });

  it('takes unrecorded upstream-named and PV-named directories for volumes, other directories for parents', async () => {
    const { dir } = await volumeRootDir();
    await mkdir(join(dir, `team-a-db-pvc-${uid}`));
    await mkdir(join(dir, 'archived-team-a-old'));
    await mkdir(join(dir, 'legacy', 'named-by-pv'), { recursive: true });
    await mkdir(join(dir, 'unrelated', 'stuff'), { recursive: true });

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set(['legacy/named-by-pv']) });

    expect(scan.volumes.map((volume) => volume.path).sort()).toEqual([
      'archived-team-a-old',
      'legacy/named-by-pv',
      `team-a-db-pvc-${uid}`,
    ]);
    expect(scan.volumes.every((volume) => volume.record === undefined)).toBe(true);
  });

  it('reports temporary records, records and locks of missing directories, but not live ones', async () => {
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'ns/live', 'pvc-live');
    await writeFile(join(dir, 'ns', '.kube-provisioner.tmp.0f3c'), '{}');
    await writeFile(join(dir, 'ns', '.gone.kube-provisioner.json'), '{}');
    await writeFile(join(dir, '.gone.kube-provisioner.lock'), '{}');
    const old = new Date('2026-01-01T00:00:00Z');
    await utimes(join(dir, 'ns', '.kube-provisioner.tmp.0f3c'), old, old);

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set() });

    expect(
      scan.leftovers.map(({ path, kind }) => ({ path, kind })).sort((a, b) => a.path.localeCompare(b.path)),
    ).toEqual([
      { path: '.gone.kube-provisioner.lock', kind: 'lock' },
      { path: 'ns/.gone.kube-provisioner.json', kind: 'record' },
      { path: 'ns/.kube-provisioner.tmp.0f3c', kind: 'temporary' },
    ]);
    expect(scan.leftovers.find((file) => file.kind === 'temporary')?.modifiedAtMs).toBe(old.getTime());
  });

  it('keeps archived and released records, and never follows a link', async () => {
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'ns/data', 'pvc-a');
    await root.archiveVolume(parseRelativeVolumePath('ns/data'), { pvName: 'pvc-a' });
    await provisionDirectory(root, 'kept', 'pvc-k');
    await root.releaseVolume(parseRelativeVolumePath('kept'), { pvName: 'pvc-k' });
    await mkdir(join(dir, 'elsewhere', `v-pvc-${uid}`), { recursive: true });
    await symlink(join(dir, 'elsewhere'), join(dir, 'link'));

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set(['link/x']) });

    const byPath = new Map(scan.volumes.map((volume) => [volume.path, volume.record]));
    // The archive's exact name is safe-fs's business; it starts with archived-data.
    const archived = [...byPath.entries()].filter(([path]) => path.startsWith('ns/archived-data'));
    expect(archived.map(([, record]) => record?.pvName)).toEqual(['pvc-a']);
    expect(byPath.get('kept')?.releasedAt).toEqual(expect.any(String));
    expect([...byPath.keys()].some((path) => path.startsWith('link'))).toBe(false);
  });

  it('reports a malformed record as unreadable', async () => {
    const { dir } = await volumeRootDir();
    await mkdir(join(dir, 'broken'));
    await writeFile(join(dir, '.broken.kube-provisioner.json'), 'not json');

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set() });

    expect(scan.volumes).toEqual([{ path: 'broken', record: undefined }]);
    expect(scan.unreadable).toEqual([{ path: 'broken', error: expect.stringMatching(/not valid JSON/u) }]);
  });

  it('goes past the depth limit only into marked parents and the parents of PV paths', async () => {
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'a/b/c', 'pvc-made-parents');
    await mkdir(join(dir, 'x', 'y', `v-pvc-${uid}`), { recursive: true });
    await mkdir(join(dir, 'p', 'q', `w-pvc-${uid}`), { recursive: true });

    const scan = await scanVolumeRoot(dir, { pvPaths: new Set(['p/q/r']), maxDepth: 1 });

    expect(scan.volumes.map((volume) => volume.path).sort()).toEqual(['a/b/c', `p/q/w-pvc-${uid}`]);
  });
});

describe('isUpstreamVolumeName', () => {
  it.each([
    [`ns-claim-pvc-${uid}`, true],
    [`pvc-${uid}`, true],
    ['archived-ns-claim', true],
    [`xpvc-${uid}`, false],
    ['data', false],
  ])('%s → %s', (leaf, expected) => {
    expect(isUpstreamVolumeName(leaf)).toBe(expected);
  });
});
