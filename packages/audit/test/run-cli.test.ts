import { describe, expect, it } from 'vitest';
import { exitClean, exitError, runAuditCli } from '../src/run-cli.ts';

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAuditCli({
    argv,
    env: {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

describe('kube-provisioner-audit exit codes', () => {
  it('prints the help and exits 0 for --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(exitClean);
    expect(stdout).toMatch(/^Usage: kube-provisioner-audit \[flags\]/u);
    expect(stdout).toMatch(/--output <value>\s+table or json \(default table\)/u);
  });

  it('exits 2 with the message and the help on a usage error', async () => {
    const { code, stderr } = await run(['--kind', 'hostpath']);
    expect(code).toBe(exitError);
    expect(stderr).toMatch(/^kube-provisioner-audit: --root must be an absolute path/u);
    expect(stderr).toMatch(/Usage:/u);
  });

  it('exits 2 when the root cannot be read, before any API call', async () => {
    const { code, stderr } = await run([
      '--kind',
      'hostpath',
      '--root',
      '/nonexistent/audit-root',
      '--provisioner-name',
      'p',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
    ]);
    expect(code).toBe(exitError);
    expect(stderr).toMatch(/cannot read the root \/nonexistent\/audit-root: ENOENT/u);
  });

  it('exits 2 when the kubeconfig cannot be read', async () => {
    const { code, stderr } = await run([
      '--kind',
      'hostpath',
      '--root',
      '/tmp',
      '--provisioner-name',
      'p',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
    ]);
    expect(code).toBe(exitError);
    expect(stderr).toMatch(/kubeconfig/u);
  });

  it('exits 2 for --quota-projects on a root without project quotas, before any API call', async () => {
    const { code, stderr } = await run([
      '--kind',
      'hostpath',
      '--root',
      '/proc',
      '--provisioner-name',
      'p',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
      '--quota-projects',
    ]);
    expect(code).toBe(exitError);
    expect(stderr).toMatch(
      /cannot read quota projects: the root \/proc is on proc .*which has no project quotas/u,
    );
  });
});
