import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWatchdog } from '../src/reaper.ts';
import { waitFor } from '../src/wait-for.ts';
import { temporaryDir } from './support/temporary-dir.ts';

/** A watchdog that copies what it reads until the pipe closes into `out`, then writes `done`. */
function recorder(out: string, releaseInput?: string): { release(): void } {
  return startWatchdog('sh', ['-c', 'cat > "$1" && echo done >> "$1"', 'recorder', out], releaseInput);
}

const finished = (out: string): Promise<string> =>
  waitFor(
    async () => {
      const text = await readFile(out, 'utf8').catch(() => '');
      return text.endsWith('done\n') ? text : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20, description: `${out} to be written` },
  );

describe('startWatchdog', () => {
  it('hands the release input to the watchdog, then closes its pipe', async () => {
    const out = join(await temporaryDir('testenv-watchdog-'), 'out');
    recorder(out, 'release\n').release();
    expect(await finished(out)).toBe('release\ndone\n');
  });

  it('closes the pipe with nothing on it when there is no release input', async () => {
    const out = join(await temporaryDir('testenv-watchdog-'), 'out');
    recorder(out).release();
    expect(await finished(out)).toBe('done\n');
  });
});
