import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { runProgram } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { temporaryRoot } from './fixtures.ts';

const cli = workspaceBinCommand(join(import.meta.dirname, '..'), 'nfs-subdir-provisioner');

describe('nfs-subdir-provisioner with NFS_EXPORTS', () => {
  it('exits 2 naming the export whose mount root is not a directory, before any API call', async () => {
    await using root = await temporaryRoot();
    await mkdir(join(root.path, 'a'));
    const exports = ['a', 'b'].map((name) => ({
      name,
      server: 'nfs.example.com',
      path: `/srv/${name}`,
      mountRoot: join(root.path, name),
    }));
    const { status, stderr } = runProgram(cli, [], {
      NFS_EXPORTS: JSON.stringify(exports),
      PROVISIONER_NAME: 'example.com/nfs',
    });
    expect(status).toBe(2);
    expect(stderr).toContain(`mount root ${join(root.path, 'b')} is not a directory`);
  });

  it('exits 2 with the problems of a bad list', () => {
    const { status, stderr } = runProgram(cli, [], {
      NFS_EXPORTS: JSON.stringify([{ name: 'a', server: 's', path: 'relative' }]),
      PROVISIONER_NAME: 'example.com/nfs',
    });
    expect(status).toBe(2);
    expect(stderr).toContain('NFS_EXPORTS[0]: "path" must be an absolute path, got "relative"');
  });

  it('lists --nfs-exports in --help', () => {
    const { status, stdout } = runProgram(cli, ['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^ {2}--nfs-exports <value> +\[\$NFS_EXPORTS\] /mu);
  });
});
