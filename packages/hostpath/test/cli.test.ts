import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

function runCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--conditions=@kube-provisioner/source', cli, ...args], {
    // No NODE_NAME or other configuration leaks in from the test's own environment.
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('kube-hostpath-provisioner', () => {
  it('refuses to start in per-node mode without NODE_NAME, exiting non-zero with a clear message', () => {
    const { status, stderr } = runCli([]);
    expect(status).toBe(2);
    expect(stderr).toContain('per-node mode needs the node name: set NODE_NAME');
  });

  it('prints the flags and their environment variables with --help', () => {
    const { status, stdout } = runCli(['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^ {2}--node-name <value> +\[\$NODE_NAME\] /mu);
    // The benchmark looks for this flag in the help text.
    expect(stdout).toContain('--claim-label-selector <value>');
  });
});
