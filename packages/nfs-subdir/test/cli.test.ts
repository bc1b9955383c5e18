import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporaryRoot } from './fixtures.ts';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

function runCli(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--conditions=@kube-provisioner/source', cli, ...args], {
    // Nothing leaks in from the test's own environment.
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('nfs-subdir-provisioner', () => {
  it("exits 2 with upstream's message when NFS_SERVER is not set", () => {
    const { status, stderr } = runCli([]);
    expect(status).toBe(2);
    expect(stderr).toContain('nfs-subdir-provisioner: NFS_SERVER not set');
  });

  it('exits 2 when the mount root is not a directory', async () => {
    await using root = await temporaryRoot();
    const { status, stderr } = runCli(['--mount-root', join(root.path, 'missing')], {
      NFS_SERVER: 'nfs.example.com',
      NFS_PATH: '/export',
      PROVISIONER_NAME: 'example.com/nfs',
    });
    expect(status).toBe(2);
    expect(stderr).toContain(`mount root ${join(root.path, 'missing')} is not a directory`);
  });

  it('prints the flags and their environment variables with --help', () => {
    const { status, stdout } = runCli(['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^ {2}--nfs-server <value> +\[\$NFS_SERVER\] /mu);
    expect(stdout).toContain('--claim-label-selector <value>');
  });
});
