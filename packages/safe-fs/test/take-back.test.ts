import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
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
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;
const hour = 3_600_000;
const start = Date.parse('2026-11-01T00:00:00Z');

type Kept = 'archived' | 'retained';

/** A root holding volume `target` of claim `old` (PV `pvc-old`) with a file, archived or retained. */
async function keptVolume(kept: Kept, target = 'ns1/data', retentionMs?: number) {
  const base = await tempDir();
  const clock = { now: start };
  const root = new VolumeRoot(base, { now: () => clock.now });
  const [namespace = '', name = ''] = target.split('/');
  await root.createVolume(path(target), { owner: ownerOf(namespace, name, 'old'), mode: 0o770 });
  await writeFile(join(base, target, 'file'), 'kept');
  let where = target;
  if (kept === 'retained') {
    await root.releaseVolume(path(target), { pvName: 'pvc-old' });
  } else {
    const result = await root.archiveVolume(path(target), { pvName: 'pvc-old', retentionMs });
    if (result.outcome !== 'archived') throw new Error('not archived');
    where = result.archivedPath;
  }
  return { base, root, clock, where };
}

function request(namespace: string, uid: string, extra: Partial<TakeBackOptions> = {}): TakeBackOptions {
  return { owner: ownerOf(namespace, 'new', uid), mode: 0o777, fromPvName: 'pvc-old', ...extra };
}

describe('takeBackVolume', () => {
  it.each<Kept>(['archived', 'retained'])(
    'moves %s data of the same namespace into the new volume and rewrites the record',
    async (kept) => {
      const { base, root, where } = await keptVolume(kept);

      const result = await root.takeBackVolume(path('ns1/new'), request('ns1', 'u2'));

      expect(result).toEqual({ outcome: 'taken-back', from: where });
      expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
      expect(await root.readRecord(path('ns1/new'))).toEqual({
        ...ownerOf('ns1', 'new', 'u2'),
        createdAt: new Date(start).toISOString(),
        takenFrom: 'pvc-old',
      });
      // No copy: the old directory and its record are gone, only the new volume is left.
      expect((await readdir(join(base, 'ns1'))).sort()).toEqual(
        ['.kube-provisioner-parent.json', '.new.kube-provisioner.json', 'new'].sort(),
      );
      expect((await stat(join(base, 'ns1/new'))).mode & 0o777).toBe(0o770);
    },
  );

  it('takes data back from another parent, removing the old parent this package made', async () => {
    const { base, root } = await keptVolume('archived', 'team/data');

    await root.takeBackVolume(path('team-new'), request('team', 'u2'));

    expect(await readFile(join(base, 'team-new/file'), 'utf8')).toBe('kept');
    expect(await readdir(base)).not.toContain('team');
  });

  it('takes a retained volume over in place when the new path is the old one', async () => {
    const { base, root } = await keptVolume('retained');

    const result = await root.takeBackVolume(path('ns1/data'), request('ns1', 'u2'));

    expect(result).toEqual({ outcome: 'taken-back', from: 'ns1/data' });
    expect(await readFile(join(base, 'ns1/data/file'), 'utf8')).toBe('kept');
    expect((await root.readRecord(path('ns1/data')))?.claimUid).toBe('u2');
  });

  it('refuses a claim of another namespace, naming neither the namespace nor touching the data', async () => {
    const { base, root, where } = await keptVolume('archived');

    const error = await rejection(root.takeBackVolume(path('ns2/new'), request('ns2', 'u2')));

    expect(error.kind).toBe('ownership');
    expect(error.message).toContain('another namespace');
    expect(error.message).not.toContain('ns1');
    expect(await readFile(join(base, where, 'file'), 'utf8')).toBe('kept');
    expect((await root.readRecord(path(where)))?.claimUid).toBe('old');
    expect(await readdir(base)).not.toContain('ns2');
  });

  it('lets another namespace take the data when the caller allows it', async () => {
    const { base, root } = await keptVolume('archived');

    await root.takeBackVolume(path('ns2/new'), request('ns2', 'u2', { fromNamespaces: ['ns1'] }));

    expect(await readFile(join(base, 'ns2/new/file'), 'utf8')).toBe('kept');
  });

  it('refuses a second claim asking for data another claim took', async () => {
    const { root } = await keptVolume('archived');
    await root.takeBackVolume(path('ns1/first'), request('ns1', 'u2'));

    const error = await rejection(root.takeBackVolume(path('ns1/second'), request('ns1', 'u3')));

    expect(error.kind).toBe('ownership');
    expect(error.message).toContain('the data of pvc-old is taken back by another claim');
  });

  it('refuses a second claim while the first is between reserving the data and moving it', async () => {
    const { root, where } = await keptVolume('archived');
    let writes = 0;
    // The first claim stops right after its reservation (its third write: lock, fsync'd publish, rename).
    await rejection(
      root.takeBackVolume(
        path('ns1/first'),
        request('ns1', 'u2', {
          beforeEachWrite: () => {
            if (++writes > 3) throw new Error('stopped');
          },
        }),
      ),
    );
    expect((await root.readRecord(path(where)))?.takenFrom).toBe('pvc-old');

    const error = await rejection(root.takeBackVolume(path('ns1/second'), request('ns1', 'u3')));

    expect(error.message).toContain('taken back by another claim');
    expect((await root.takeBackVolume(path('ns1/first'), request('ns1', 'u2'))).outcome).toBe('taken-back');
  });

  it('refuses two claims asking at once except exactly one', async () => {
    const { root } = await keptVolume('archived');

    const results = await Promise.allSettled([
      root.takeBackVolume(path('ns1/a'), request('ns1', 'ua')),
      root.takeBackVolume(path('ns1/b'), request('ns1', 'ub')),
    ]);

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });

  it('refuses data still in use by its PV, and a PV nothing is recorded for', async () => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('ns1/data'), { owner: ownerOf('ns1', 'data', 'old'), mode: 0o777 });

    const inUse = await rejection(root.takeBackVolume(path('ns1/new'), request('ns1', 'u2')));
    const unknown = await rejection(
      root.takeBackVolume(path('ns1/new'), request('ns1', 'u2', { fromPvName: 'pvc-nothing' })),
    );

    expect(inUse.message).toContain('still in use by its PV');
    expect(unknown.message).toContain('no archived or retained directory is recorded for pvc-nothing');
    expect(await readdir(join(base, 'ns1'))).not.toContain('new');
  });

  it('refuses an archive that expires within the margin, which the retention sweep may be removing', async () => {
    const { root, clock } = await keptVolume('archived', 'ns1/data', hour);
    clock.now = start + hour - 30_000;

    const error = await rejection(root.takeBackVolume(path('ns1/new'), request('ns1', 'u2')));

    expect(error.message).toContain('has expired');
  });

  it('keeps a taken archive from the retention sweep: the rewritten record has no expiry', async () => {
    const { base, root, clock } = await keptVolume('archived', 'ns1/data', hour);
    await root.takeBackVolume(path('ns1/new'), request('ns1', 'u2'));
    clock.now = start + 2 * hour;

    const report = await root.removeExpiredArchives();

    expect(report.removed).toEqual([]);
    expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
  });

  it('refuses a new path that belongs to another claim before reserving the data', async () => {
    const { root, where } = await keptVolume('archived');
    await root.createVolume(path('ns1/taken'), { owner: ownerOf('ns1', 'taken', 'u9'), mode: 0o777 });

    const error = await rejection(root.takeBackVolume(path('ns1/taken'), request('ns1', 'u2')));

    expect(error.message).toContain('belongs to another claim');
    expect((await root.readRecord(path(where)))?.claimUid).toBe('old');
  });

  it("refuses to move an old volume that holds another volume's record (a nesting race mark)", async () => {
    const { base, root, where } = await keptVolume('archived');
    await writeFile(join(base, where, '.x.kube-provisioner.json'), '{}');

    const error = await rejection(root.takeBackVolume(path('ns1/new'), request('ns1', 'u2')));

    expect(error.message).toContain('volumes cannot be nested');
    expect((await root.readRecord(path(where)))?.claimUid).toBe('old');
  });

  it('is finished by the retry after a crash between the rename and the record update', async () => {
    const { base, where } = await keptVolume('archived');
    let renamed = false;
    const fs: FsOps = {
      ...nodeFsOps,
      rename: async (from, to) => {
        await nodeFsOps.rename(from, to);
        if (String(to).endsWith('/new')) renamed = true;
      },
      unlink: async (target) => {
        if (renamed) throw new Error('killed');
        return nodeFsOps.unlink(target);
      },
    };
    await rejection(new VolumeRoot(base, { fs }).takeBackVolume(path('ns1/new'), request('ns1', 'u2')));
    expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
    // The old record still says the data is this claim's, so no other claim can take it meanwhile.
    expect(await new VolumeRoot(base).readRecord(path(where))).toMatchObject({ claimUid: 'u2' });
    const other = await rejection(new VolumeRoot(base).takeBackVolume(path('ns1/x'), request('ns1', 'u3')));
    expect(other.message).toContain('taken back by another claim');

    const retried = await new VolumeRoot(base).takeBackVolume(path('ns1/new'), request('ns1', 'u2'));

    expect(retried).toEqual({ outcome: 'taken-back', from: where });
    expect(await new VolumeRoot(base).readRecord(path(where))).toBeUndefined();
    expect(await readFile(join(base, 'ns1/new/file'), 'utf8')).toBe('kept');
  });

  it('reports reused when retried after it finished', async () => {
    const { root } = await keptVolume('archived');
    await root.takeBackVolume(path('ns1/new'), request('ns1', 'u2'));

    expect(await root.takeBackVolume(path('ns1/new'), request('ns1', 'u2'))).toEqual({
      outcome: 'reused',
      from: undefined,
    });
  });
});

describe('takeBackVolume, again and given back', () => {
  it('takes back a volume that was itself taken back, once it is archived again', async () => {
    const { base, root } = await keptVolume('archived');
    await root.takeBackVolume(path('ns1/new'), request('ns1', 'u2'));
    const again = await root.archiveVolume(path('ns1/new'), { pvName: 'pvc-u2' });
    if (again.outcome !== 'archived') throw new Error('not archived');

    const result = await root.takeBackVolume(
      path('ns1/third'),
      request('ns1', 'u3', { fromPvName: 'pvc-u2' }),
    );

    expect(result).toEqual({ outcome: 'taken-back', from: again.archivedPath });
    expect(await readFile(join(base, 'ns1/third/file'), 'utf8')).toBe('kept');
  });

  it('gives the data back, expiry included, when the new path cannot be made, and says so', async () => {
    const { base, root, clock, where } = await keptVolume('archived', 'ns1/data', hour);
    const before = await root.readRecord(path(where));
    await mkdir(join(base, 'ns1/new'));
    const released: string[] = [];

    const error = await rejection(
      root.takeBackVolume(path('ns1/new'), request('ns1', 'u2', { onReleased: (m) => released.push(m) })),
    );

    expect(error.message).toContain('without an ownership record');
    expect(released).toEqual([expect.stringContaining('released the data of pvc-old')]);
    expect(await root.readRecord(path(where))).toEqual(before);
    // Another claim may take it, and the sweep removes it when it expires.
    clock.now = start + 2 * hour;
    expect((await root.removeExpiredArchives()).removed).toEqual([where]);
  });
});

describe('a claim losing the data to another is told so, however the searches interleave', () => {
  /** Calls that stall (`reached`) at the `stopAt`-th `call` on `name` until `go` is called. */
  function stallAt(call: 'lstat' | 'open', name: string, stopAt: number) {
    let go = () => {};
    const resumed = new Promise<void>((resolve) => {
      go = resolve;
    });
    let hit = () => {};
    const reached = new Promise<void>((resolve) => {
      hit = resolve;
    });
    let looked = 0;
    const stall = async (target: FsPath) => {
      if (String(target).endsWith(`/${name}`) && ++looked === stopAt) {
        hit();
        await resumed;
      }
    };
    const fs: FsOps =
      call === 'lstat'
        ? { ...nodeFsOps, lstat: (target) => stall(target).then(() => nodeFsOps.lstat(target)) }
        : {
            ...nodeFsOps,
            open: (target, flags, mode) => stall(target).then(() => nodeFsOps.open(target, flags, mode)),
          };
    return { fs, reached, go };
  }

  it.each<[string, 'lstat' | 'open', number]>([
    // Its search lists the base, then stalls before entering the old parent: the move ends meanwhile.
    ['while it searches', 'lstat', 1],
    // Its search found the data, then it stalls before opening the old parent to reserve it.
    ['between its search and its reservation', 'open', 2],
  ])('%s', async (_when, call, stopAt) => {
    const base = await tempDir();
    const root = new VolumeRoot(base);
    await root.createVolume(path('a/ns1/old'), { owner: ownerOf('ns1', 'old', 'old'), mode: 0o777 });
    await writeFile(join(base, 'a/ns1/old/file'), 'kept');
    await root.archiveVolume(path('a/ns1/old'), { pvName: 'pvc-old' });
    const { fs, reached, go } = stallAt(call, 'a', stopAt);
    const losing = rejection(
      new VolumeRoot(base, { fs }).takeBackVolume(path('ns1/b/new2'), request('ns1', 'u1')),
    );
    await reached;

    await root.takeBackVolume(path('ns1/b/new'), request('ns1', 'u0'));
    go();

    expect((await losing).message).toContain('the data of pvc-old is taken back by another claim');
    expect(await readFile(join(base, 'ns1/b/new/file'), 'utf8')).toBe('kept');
  });
});
