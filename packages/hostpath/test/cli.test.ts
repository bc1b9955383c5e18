import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { runProgram } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';

const cli = workspaceBinCommand(join(import.meta.dirname, '..'), 'kube-hostpath-provisioner');

describe('kube-hostpath-provisioner', () => {
  it('refuses to start in per-node mode without NODE_NAME, exiting non-zero with a clear message', () => {
    const { status, stderr } = runProgram(cli, []);
    expect(status).toBe(2);
    expect(stderr).toContain('per-node mode needs the node name: set NODE_NAME');
  });

  it('prints the flags and their environment variables with --help', () => {
    const { status, stdout } = runProgram(cli, ['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^ {2}--node-name <value> +\[\$NODE_NAME\] /mu);
    // The benchmark looks for this flag in the help text.
    expect(stdout).toContain('--claim-label-selector <value>');
  });
});
