import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isSnapshotPath,
  parentMarkerName,
  parseRelativeVolumePath,
  snapshotAreaName,
  snapshotPath,
  VolumeRoot,
} from '../src/index.ts';
import { parseStoredPath } from '../src/snapshot-area.ts';
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

/** A root with volume `ns1/src` of PV `pvc-src` holding a few files. */
async function sourceRoot(): Promise<{ base: string; root: VolumeRoot }> {
  const base = await tempDir();
  const root = new VolumeRoot(base);
  await root.createVolume(path('ns1/src'), { owner: ownerOf('ns1', 'src', 'src'), mode: 0o777 });
  await mkdir(join(base, 'ns1/src/sub'));
  await writeFile(join(base, 'ns1/src/sub/a.txt'), 'alpha');
  return { base, root };
}

const snapshotOwner = { ...ownerOf('ns1', 'snap', 'snap-uid'), pvName: 'snapshot-snap-uid' };

describe('the snapshot area', () => {
  it('names a snapshot by namespace and UID in the reserved area, which no volume path can name', async () => {
    expect(snapshotPath('ns1', 'snap-uid')).toBe(`${snapshotAreaName}/ns1/snap-uid`);
    expect(isSnapshotPath(snapshotPath('ns1', 'snap-uid'))).toBe(true);
    expect(() => path(`${snapshotAreaName}/ns1/snap-uid`)).toThrow(/reserved/);
    expect(() => path(`ns1/${snapshotAreaName}`)).toThrow(/reserved/);
    expect(() => snapshotPath('..', 'uid')).toThrow(/".." segment/);
    expect(() => parseStoredPath(`${snapshotAreaName}/only-one`)).toThrow(/no snapshot/);
    expect(() => parseStoredPath(`${snapshotAreaName}/ns1/../x`)).toThrow(/".." segment/);
  });

  it('takes a snapshot by cloning a volume into the area, restores from it and deletes it', async () => {
    const { base, root } = await sourceRoot();
    const snapshot = snapshotPath('ns1', 'snap-uid');

    await root.cloneVolume(path('ns1/src'), snapshot, {
      owner: snapshotOwner,
      mode: 0o700,
      sourcePvName: 'pvc-src',
    });
    await writeFile(join(base, 'ns1/src/sub/a.txt'), 'changed after the snapshot');
    await root.cloneVolume(snapshot, path('ns1/restored'), {
      owner: ownerOf('ns1', 'restored', 'restored'),
      mode: 0o777,
      sourcePvName: 'snapshot-snap-uid',
    });

    expect(await readFile(join(base, 'ns1/restored/sub/a.txt'), 'utf8')).toBe('alpha');
    expect((await root.readRecord(snapshot))?.pvName).toBe('snapshot-snap-uid');
    expect(await root.deleteVolume(snapshot, { pvName: 'snapshot-snap-uid' })).toBe('deleted');
    // The area and its namespace directory were made for the snapshot and go with it.
    expect((await readdir(base)).filter((name) => name.includes('snapshots'))).toEqual([]);
  });

  it('refuses to delete a snapshot whose record names another', async () => {
    const { base, root } = await sourceRoot();
    const snapshot = snapshotPath('ns1', 'snap-uid');
    await root.cloneVolume(path('ns1/src'), snapshot, {
      owner: snapshotOwner,
      mode: 0o700,
      sourcePvName: 'pvc-src',
    });

    const refusal = await rejection(root.deleteVolume(snapshot, { pvName: 'snapshot-other' }));

    expect(refusal.message).toMatch(/snapshot-other|record/);
    expect((await stat(join(base, snapshot, 'sub/a.txt'))).isFile()).toBe(true);
  });

  it('after a kill during the copy, the retry removes the partial copy and snapshots exactly', async () => {
    const { base, root } = await sourceRoot();
    const snapshot = snapshotPath('ns1', 'snap-uid');
    let writes = 0;
    const killed = await rejection(
      root.cloneVolume(path('ns1/src'), snapshot, {
        owner: snapshotOwner,
        mode: 0o700,
        sourcePvName: 'pvc-src',
        beforeEachWrite: () => {
          if (writes++ >= 6) throw new Error('killed');
        },
      }),
    );
    expect(killed.message).toBe('killed');

    await root.cloneVolume(path('ns1/src'), snapshot, {
      owner: snapshotOwner,
      mode: 0o700,
      sourcePvName: 'pvc-src',
    });

    expect(await readFile(join(base, snapshot, 'sub/a.txt'), 'utf8')).toBe('alpha');
    expect(
      (await readdir(join(base, snapshotAreaName, 'ns1'))).filter((name) => name.endsWith('.copy')),
    ).toEqual([]);
  });

  it('a snapshot given up after a killed copy leaves no data once its leftover and volume are removed', async () => {
    const { base, root } = await sourceRoot();
    const snapshot = snapshotPath('ns1', 'snap-uid');
    let leftovers = 0;
    for (const killAt of [6, 10, 14, 20]) {
      let writes = 0;
      // A kill past the copy's last write lets it complete.
      await root
        .cloneVolume(path('ns1/src'), snapshot, {
          owner: snapshotOwner,
          mode: 0o700,
          sourcePvName: 'pvc-src',
          beforeEachWrite: () => {
            if (writes++ >= killAt) throw new Error('killed');
          },
        })
        .catch(() => undefined);
      // What a provisioner giving the snapshot up does: its volume made whole (the kill may have come
      // between its record and its directory), the copy's leftover removed, then the volume deleted.
      await root.createVolume(snapshot, { owner: snapshotOwner, mode: 0o700 });
      const area = join(base, snapshotAreaName, 'ns1');
      const entries = await readdir(area).catch(() => []);
      if (entries.some((name) => name.endsWith('.copy'))) {
        leftovers++;
        const refusal = await rejection(root.removeCloneLeftover(snapshot, { pvName: 'snapshot-other' }));
        expect(refusal.message).toMatch(/snapshot-other/);
        expect(await root.removeCloneLeftover(snapshot, { pvName: 'snapshot-snap-uid' })).toBe(true);
      }
      await root.deleteVolume(snapshot, { pvName: 'snapshot-snap-uid' });

      // A kill while the area's parents were made may leave one empty, as for any volume: no data.
      const left = await readdir(area).catch(() => []);
      expect(left.filter((name) => name !== parentMarkerName)).toEqual([]);
    }
    expect(leftovers).toBeGreaterThan(0);
  });
});
