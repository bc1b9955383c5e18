import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from '../src/process-group.ts';
import { pinnedVersions } from '../src/versions.ts';
import { temporaryDir } from './support/temporary-dir.ts';

const run = promisify(execFile);
const cli = new URL('../src/cli.ts', import.meta.url).pathname;
const kubeTestenv = (...args: string[]) => run(process.execPath, [cli, ...args], { env: { ...process.env } });

/** Parses `export NAME='value'` lines. */
function exports(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const match of text.matchAll(/^export (\w+)='([^']*)'/gm)) {
    if (match[1] && match[2] !== undefined) values[match[1]] = match[2];
  }
  return values;
}

describe('kube-testenv CLI', () => {
  it('up is ready within 30 s with a warm cache, reports the pinned version, and down leaves no process', async () => {
    const dir = await temporaryDir('kube-testenv-cli-');
    const started = Date.now();
    const up = await kubeTestenv('up', '--dir', dir);
    // From here on a failed check must still stop the control plane, before its directory is removed.
    try {
      expect(Date.now() - started).toBeLessThan(30_000);
      const env = exports(up.stdout);
      expect(env.KUBECONFIG).toBe(join(dir, 'kubeconfig.yaml'));
      expect(env.TESTENV_DIR).toBe(dir);
      expect(up.stdout).toMatch(/^export PATH='[^']+':"\$PATH"$/m);

      expect((await kubeTestenv('env', '--dir', dir)).stdout).toBe(up.stdout);
      const status = await kubeTestenv('status', '--dir', dir);
      const pids = [...status.stdout.matchAll(/running \(pid (\d+)\)/g)].map((m) => Number(m[1]));
      expect(pids).toHaveLength(4);

      const binDir = /^export PATH='([^']+)'/m.exec(up.stdout)?.[1] ?? '';
      const version = await run(join(binDir, 'kubectl'), ['get', '--raw', '/version'], {
        env: { ...process.env, KUBECONFIG: env.KUBECONFIG },
      });
      expect(JSON.parse(version.stdout)).toMatchObject({ gitVersion: pinnedVersions.kubernetes });

      await kubeTestenv('down', '--dir', dir);
      for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
      await expect(kubeTestenv('status', '--dir', dir)).rejects.toMatchObject({ code: 1 });
    } finally {
      await kubeTestenv('down', '--dir', dir);
    }
  });
});
