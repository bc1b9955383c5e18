// The shipped provisioner binaries, built, on a Node.js older than the packages need: a clear message
// and exit code 1 instead of a SyntaxError from deep inside the module graph. End-to-end class because
// it runs the built `dist/cli.js` (the `test` task builds first) under the system's old Node.js.
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isSupportedNodeVersion, minimumNodeVersion } from '../src/cli/node-guard.ts';

const run = promisify(execFile);
const packages = join(import.meta.dirname, '../..');

/** The first `node` on PATH older than the minimum (this machine's system Node.js 20). */
function oldNode(): { path: string; version: string } {
  const candidates = execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const path of candidates) {
    const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (!isSupportedNodeVersion(version)) return { path, version };
  }
  throw new Error(`no Node.js older than ${minimumNodeVersion} on PATH (${candidates.join(', ')})`);
}

describe('the Node.js version guard of the provisioner binaries', () => {
  const node = oldNode();

  it.each([
    ['hostpath', 'kube-hostpath-provisioner'],
    ['nfs-subdir', 'nfs-subdir-provisioner'],
    ['nfs-client', 'nfs-client-provisioner'],
  ])('%s: exits 1 naming the required version', async (dir, program) => {
    const failure = await run(node.path, [join(packages, dir, 'dist/cli.js'), '--help']).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toBe(
      `${program}: needs Node.js >= 22.19.0, but this is Node.js v${node.version}. ` +
        'Run it with Node.js 24 LTS (or the container image).\n',
    );
  });
});

describe('isSupportedNodeVersion', () => {
  it.each([
    ['20.20.2', false],
    ['22.18.9', false],
    ['22.19.0', true],
    ['22.20.0', true],
    ['24.0.0', true],
    ['100.0.0', true],
  ])('%s → %s', (version, supported) => {
    expect(isSupportedNodeVersion(version)).toBe(supported);
  });
});
