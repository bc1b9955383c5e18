import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { runProgram } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { temporaryRoot } from './fixtures.ts';

const cli = workspaceBinCommand(join(import.meta.dirname, '..'), 'kube-hostpath-provisioner');

describe('kube-hostpath-provisioner with named roots', () => {
  it('refuses two roots on one file system before connecting, naming both', async () => {
    await using first = await temporaryRoot();
    await using second = await temporaryRoot();
    const { status, stderr } = runProgram(cli, ['--root', `a=${first.path},b=${second.path}`], {
      NODE_NAME: 'node-a',
      KUBECONFIG: '/nonexistent/kubeconfig',
    });
    expect(status).toBe(2);
    expect(stderr).toContain(
      `roots a (${first.path}) and b (${second.path}) are on one file system: each named root must be a file system of its own`,
    );
  });
});
