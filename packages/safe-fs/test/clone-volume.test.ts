import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CloneVolumeOptions, cloneVolume } from '../src/clone-volume.ts';
import { nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import type { VolumeContext } from '../src/volume-context.ts';
import { ownerOf, rejection, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const path = parseRelativeVolumePath;

function contextOf(base: string): VolumeContext {
  return { fs: nodeFsOps, base, now: Date.now, touch: async () => undefined };
}

/** A base with volume `ns1/src` of PV `pvc-src` holding `files` files in a few directories. */
async function sourceVolume(files: number): Promise<string> {
  const base = await tempDir();
  await new VolumeRoot(base).createVolume(path('ns1/src'), {
    owner: ownerOf('ns1', 'src', 'src'),
    mode: 0o777,
  });
  for (let index = 0; index < files; index++) {
    const dir = join(base, 'ns1/src', `d${index % 5}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `f${index}`), `content ${index}`);
  }
  return base;
}

function request(extra: Partial<CloneVolumeOptions> = {}): CloneVolumeOptions {
  return { owner: ownerOf('ns1', 'copy', 'copy'), mode: 0o777, sourcePvName: 'pvc-src', ...extra };
}

describe('cloneVolume', () => {
  it('creates the volume with a copy of the source, leaving no temporary directory', async () => {
    const base = await sourceVolume(20);

    const progress = await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());

    expect(progress).toMatchObject({ entries: 25, skipped: 0 });
    expect(await readFile(join(base, 'ns1/copy/d3/f13'), 'utf8')).toBe('content 13');
    expect((await new VolumeRoot(base).readRecord(path('ns1/copy')))?.claimUid).toBe('copy');
    expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
  });

  it('after a kill anywhere, the retry removes the leftover and copies again, exactly', async () => {
    let leftovers = 0;
    for (const stopAt of [3, 8, 15, 30, 60]) {
      const base = await sourceVolume(20);
      let writes = 0;
      const stop = () => {
        if (writes++ >= stopAt) throw new Error('killed');
      };
      const killed = await rejection(
        cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ beforeEachWrite: stop })),
      );
      expect(killed.message).toBe('killed');
      // Like a kill, the stopped call could not clean up after itself.
      if ((await readdir(join(base, 'ns1'))).some((name) => name.endsWith('.copy'))) leftovers++;

      await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());

      expect((await readdir(join(base, 'ns1/copy'), { recursive: true })).length).toBe(25);
      expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
    }
    expect(leftovers).toBeGreaterThan(2);
  });

  it('run again after a kill that came once the copy was in place, keeps that copy instead of refusing', async () => {
    const base = await sourceVolume(20);
    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());
    // The source changes after the copy: a second copy would show it.
    await writeFile(join(base, 'ns1/src/late'), 'late');

    const progress = await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());

    expect(progress).toMatchObject({ entries: 25, skipped: 0 });
    expect(progress.bytes).toBeGreaterThan(0);
    expect((await readdir(join(base, 'ns1/copy'), { recursive: true })).length).toBe(25);
    expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
  });

  it('removes its temporary directory when aborted, leaving the empty volume to its caller', async () => {
    const base = await sourceVolume(5);
    const controller = new AbortController();
    controller.abort(new Error('claim deleted'));

    const error = await rejection(
      cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ signal: controller.signal })),
    );

    expect(error.message).toBe('claim deleted');
    expect(await readdir(join(base, 'ns1/copy'))).toEqual([]);
    expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
  });

  it('refuses a source not recorded for the source PV, copying nothing', async () => {
    const base = await sourceVolume(1);

    const error = await rejection(
      cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ sourcePvName: 'pvc-other' })),
    );

    expect(error.message).toContain('is not the volume of pvc-other');
    expect(await readdir(join(base, 'ns1/copy'))).toEqual([]);
  });

  it('calls beforeCopy once with the empty temporary directory, before any file is copied', async () => {
    const base = await sourceVolume(10);
    const seen: Array<{ directory: string; entries: string[]; volume: string[] }> = [];
    const beforeCopy = async (directory: string) => {
      seen.push({
        directory,
        entries: await readdir(directory),
        volume: await readdir(join(base, 'ns1/copy')),
      });
    };

    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ beforeCopy }));

    expect(seen).toHaveLength(1);
    expect(seen[0]?.directory.startsWith(join(base, 'ns1/'))).toBe(true);
    expect(seen[0]?.directory.endsWith('.copy')).toBe(true);
    expect(seen[0]?.entries).toEqual([]);
    expect(seen[0]?.volume).toEqual([]);
    expect((await readdir(join(base, 'ns1/copy'), { recursive: true })).length).toBe(15);
  });

  it('copies into what beforeCopy prepared: the directory it was given becomes the volume', async () => {
    const base = await sourceVolume(3);
    const beforeCopy = (directory: string) => writeFile(join(directory, 'prepared'), 'by the caller');

    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ beforeCopy }));

    expect(await readFile(join(base, 'ns1/copy/prepared'), 'utf8')).toBe('by the caller');
    expect(await readFile(join(base, 'ns1/copy/d2/f2'), 'utf8')).toBe('content 2');
  });

  it('when beforeCopy fails, copies nothing and leaves no temporary directory', async () => {
    const base = await sourceVolume(5);
    const beforeCopy = () => Promise.reject(new Error('no quota project'));

    const error = await rejection(
      cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ beforeCopy })),
    );

    expect(error.message).toBe('no quota project');
    expect(await readdir(join(base, 'ns1/copy'))).toEqual([]);
    expect((await readdir(join(base, 'ns1'))).filter((name) => name.endsWith('.copy'))).toEqual([]);
  });

  it("does not call beforeCopy again when it keeps an earlier run's complete copy", async () => {
    const base = await sourceVolume(3);
    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request());
    let calls = 0;
    const beforeCopy = async () => {
      calls++;
    };

    await cloneVolume(contextOf(base), path('ns1/src'), path('ns1/copy'), request({ beforeCopy }));

    expect(calls).toBe(0);
  });
});
