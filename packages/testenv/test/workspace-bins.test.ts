// Every bin of every workspace package answers --version and --help as a child process, with exit
// status 0 and no required setting given: what `kubectl exec … --version` on a broken pod needs.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { workspaceBinCommand } from '../src/index.ts';

const repositoryRoot = join(import.meta.dirname, '..', '..', '..');

const bins = ['packages', 'examples'].flatMap((group) =>
  readdirSync(join(repositoryRoot, group)).flatMap((name) => {
    const dir = join(repositoryRoot, group, name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      bin?: Record<string, string>;
    };
    return Object.keys(manifest.bin ?? {}).map((bin) => ({ dir, bin, version: manifest.version }));
  }),
);

async function run(dir: string, bin: string, flag: string): Promise<string> {
  const { command, args } = workspaceBinCommand(dir, bin);
  // No environment: nothing configured, as on a pod whose settings are wrong.
  const { stdout } = await promisify(execFile)(command, [...args, flag], {
    env: { PATH: process.env.PATH ?? '' },
  });
  return stdout;
}

describe('workspace bins', () => {
  it('are found', () => {
    expect(bins.map(({ bin }) => bin)).toEqual(
      expect.arrayContaining(['kube-provisioner-audit', 'kube-testenv']),
    );
  });

  it.each(bins)('$bin --version prints its version and exits 0', async ({ dir, bin, version }) => {
    expect(await run(dir, bin, '--version')).toContain(version);
  });

  it.each(bins)('$bin --help prints its usage and exits 0', async ({ dir, bin }) => {
    expect(await run(dir, bin, '--help')).toMatch(/usage/iu);
  });
});
