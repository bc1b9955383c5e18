import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

function runCli(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--conditions=@kube-provisioner/source', cli, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('nfs-client-provisioner', () => {
  it('exits 2 naming the missing variable', () => {
    const { status, stderr } = runCli([], { NFS_SERVER: '10.0.0.2', NFS_PATH: '/ifs/kubernetes' });
    expect(status).toBe(2);
    expect(stderr).toContain('nfs-client-provisioner: PROVISIONER_NAME not set');
  });

  it('prints its own name and the flags with --help', () => {
    const { status, stdout } = runCli(['--help']);
    expect(status).toBe(0);
    expect(stdout).toContain('Usage: nfs-client-provisioner [flags]');
    expect(stdout).toMatch(/^ {2}--mount-root <value> +\[\$NFS_MOUNT_ROOT\] /mu);
  });
});
