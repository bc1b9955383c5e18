import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { runProgram } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { temporaryRoot } from './fixtures.ts';

const cli = workspaceBinCommand(join(import.meta.dirname, '..'), 'nfs-subdir-provisioner');

describe('nfs-subdir-provisioner', () => {
  it("exits 2 with upstream's message when NFS_SERVER is not set", () => {
    const { status, stderr } = runProgram(cli, []);
    expect(status).toBe(2);
    expect(stderr).toContain('nfs-subdir-provisioner: NFS_SERVER not set');
  });

  it('exits 2 when the mount root is not a directory', async () => {
    await using root = await temporaryRoot();
    const { status, stderr } = runProgram(cli, ['--mount-root', join(root.path, 'missing')], {
      NFS_SERVER: 'nfs.example.com',
      NFS_PATH: '/export',
      PROVISIONER_NAME: 'example.com/nfs',
    });
    expect(status).toBe(2);
    expect(stderr).toContain(`mount root ${join(root.path, 'missing')} is not a directory`);
  });

  it('prints the flags and their environment variables with --help', () => {
    const { status, stdout } = runProgram(cli, ['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^ {2}--nfs-server <value> +\[\$NFS_SERVER\] /mu);
    expect(stdout).toContain('--claim-label-selector <value>');
  });
});
