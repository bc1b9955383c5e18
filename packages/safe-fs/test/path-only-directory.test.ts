/**
 * A directory opened path-only (`O_PATH`): `fchmod(2)`/`fchown(2)` refuse its descriptor, so both
 * tables change it through `/proc/self/fd/<fd>`, which names that very directory.
 */
import { constants } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localFsOps, nodeFsOps } from '../src/index.ts';
import { useTempDirs } from './fixtures.ts';

const tempDir = useTempDirs();
const pathOnly = 0o10000000;

describe.each([
  ['nodeFsOps', nodeFsOps],
  ['localFsOps', localFsOps],
])('%s on a path-only directory descriptor', (_table, fs) => {
  it('sets the mode and owner of the directory it was opened on, even once renamed', async () => {
    const base = await tempDir();
    await mkdir(join(base, 'volume'), { mode: 0o700 });
    const handle = await fs.open(
      join(base, 'volume'),
      pathOnly | constants.O_DIRECTORY | constants.O_NOFOLLOW,
    );
    try {
      // Whatever now has the name is not what the descriptor names.
      await rename(join(base, 'volume'), join(base, 'moved'));
      await mkdir(join(base, 'volume'), { mode: 0o700 });

      await fs.fchown(handle, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
      await fs.fchmod(handle, 0o2775);

      expect((await stat(join(base, 'moved'))).mode & 0o7777).toBe(0o2775);
      expect((await stat(join(base, 'volume'))).mode & 0o7777).toBe(0o700);
    } finally {
      await handle.close();
    }
  });
});
