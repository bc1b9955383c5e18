/**
 * A guarded operation that was paused and resumed after its term ended (a frozen leader whose
 * successor took over) stops at its next write, so it cannot undo what the successor did.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsOps, nodeFsOps, parseRelativeVolumePath, VolumeRoot } from '../src/index.ts';
import { ownerOf, useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const owner = ownerOf('ns1', 'data', 'u1');
const volume = parseRelativeVolumePath('ns1-data');

class TermEnded extends Error {}

/** A promise the test opens by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/**
 * System calls that freeze once the first `call` is made (`symlink`: the first record text written,
 * a temporary record that replaces another or a new record itself; `rename`: a delete's move
 * of the volume to its removal name), until `resume` opens; `frozen` opens once they froze. That write
 * passed the guard; the next one is checked again.
 */
function freezingAfter(call: 'symlink' | 'rename' = 'symlink'): {
  fs: FsOps;
  frozen: Promise<void>;
  resume: () => void;
} {
  const frozen = gate();
  const resumed = gate();
  let froze = false;
  const freeze = async () => {
    if (!froze) {
      froze = true;
      frozen.open();
      await resumed.wait;
    }
  };
  return {
    fs: {
      ...nodeFsOps,
      [call]: async (...args: [never, never]) => {
        await (nodeFsOps[call] as (...args: [never, never]) => Promise<void>)(...args);
        await freeze();
      },
    },
    frozen: frozen.wait,
    resume: resumed.open,
  };
}

/** A guard that passes until `end()` is called. */
function term(): { guard: () => void; end: () => void } {
  let ended = false;
  return {
    guard: () => {
      if (ended) throw new TermEnded('the term ended');
    },
    end: () => {
      ended = true;
    },
  };
}

describe('a guarded removal resumed after its term ended', () => {
  it.each([
    // A delete frozen after its rename to the removal name: the successor finds the record beside
    // that name and finishes the removal ('missing'); an archive freezes stamping the record.
    ['deleteVolume', 'rename', 'missing'],
    ['archiveVolume', 'symlink', 'deleted'],
  ] as const)(
    '%s does not put back the record the successor removed, and leaves nothing behind',
    async (operation, call, successor) => {
      const base = await tempDir();
      await new VolumeRoot(base).createVolume(volume, { owner, mode: 0o777 });
      const { fs, frozen, resume } = freezingAfter(call);
      const { guard, end } = term();

      const paused = new VolumeRoot(base, { fs })[operation](volume, {
        pvName: owner.pvName,
        beforeEachWrite: guard,
      });
      await frozen;
      end();
      await expect(new VolumeRoot(base).deleteVolume(volume, { pvName: owner.pvName })).resolves.toBe(
        successor,
      );
      resume();

      await expect(paused).rejects.toBeInstanceOf(TermEnded);
      expect(await readdir(base)).toEqual([]);
    },
  );

  it('an unguarded removal in the same position does put the record back (what the guard prevents)', async () => {
    const base = await tempDir();
    await new VolumeRoot(base).createVolume(volume, { owner, mode: 0o777 });
    const { fs, frozen, resume } = freezingAfter();

    // An archive stamps the record by a rewrite (a delete no longer rewrites it).
    const paused = new VolumeRoot(base, { fs }).archiveVolume(volume, { pvName: owner.pvName });
    await frozen;
    await new VolumeRoot(base).deleteVolume(volume, { pvName: owner.pvName });
    resume();

    await expect(paused).rejects.toThrow();
    expect(await readdir(base)).toEqual(['.ns1-data.kube-provisioner.json']);
  });
});

describe('a guarded create whose term ended', () => {
  it('makes nothing once the guard refuses, and the refusal reaches the caller unchanged', async () => {
    const base = await tempDir();
    const { guard, end } = term();
    end();
    const creating = new VolumeRoot(base).createVolume(volume, {
      owner,
      mode: 0o777,
      beforeEachWrite: guard,
    });
    await expect(creating).rejects.toBeInstanceOf(TermEnded);
    expect(await readdir(base)).toEqual([]);
  });

  it('leaves what it made in place when the term ends half way, for the successor to reuse', async () => {
    const base = await tempDir();
    const { fs, frozen, resume } = freezingAfter();
    const { guard, end } = term();
    const creating = new VolumeRoot(base, { fs }).createVolume(parseRelativeVolumePath('ns1/data'), {
      owner,
      mode: 0o777,
      beforeEachWrite: guard,
    });
    await frozen;
    end();
    resume();
    await expect(creating).rejects.toBeInstanceOf(TermEnded);
    // The parent and the record made before the freeze stay; the volume's mkdir was refused.
    expect((await readdir(join(base, 'ns1'))).sort()).toEqual([
      '.data.kube-provisioner.json',
      '.kube-provisioner-parent.json',
    ]);
    await expect(
      new VolumeRoot(base).createVolume(parseRelativeVolumePath('ns1/data'), { owner, mode: 0o777 }),
    ).resolves.toBe('created');
  });
});
