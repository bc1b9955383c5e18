import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { runProgram } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';

const cli = workspaceBinCommand(join(import.meta.dirname, '..'), 'nfs-client-provisioner');

describe('nfs-client-provisioner', () => {
  it('exits 2 naming the missing variable', () => {
    const { status, stderr } = runProgram(cli, [], { NFS_SERVER: '10.0.0.2', NFS_PATH: '/ifs/kubernetes' });
    expect(status).toBe(2);
    expect(stderr).toContain('nfs-client-provisioner: PROVISIONER_NAME not set');
  });

  it('prints its own name and the flags with --help', () => {
    const { status, stdout } = runProgram(cli, ['--help']);
    expect(status).toBe(0);
    expect(stdout).toContain('Usage: nfs-client-provisioner [flags]');
    expect(stdout).toMatch(/^ {2}--mount-root <value> +\[\$NFS_MOUNT_ROOT\] /mu);
  });
});
