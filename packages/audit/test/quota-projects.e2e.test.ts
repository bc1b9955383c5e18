/**
 * End-to-end on a real kernel with project quotas (the test guest): `kube-provisioner-audit
 * --quota-projects`, bundled and run as a child process inside the guest under the audit's
 * ServiceAccount, reads the project IDs of an XFS root mounted with `prjquota` with `xfs_quota` and
 * reports a project no volume's record holds; on a root without project quotas it stops with the
 * reason before judging anything.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyManifests } from '@kube-provisioner/testenv';
import { createQuotaFileSystem, type Guest, type QuotaFileSystem } from '@kube-provisioner/testenv/guest';
import { bundleProgram } from '@kube-provisioner/testenv/internal';
import { guestAvailable, uniqueName, useGuest, useTestEnv } from '@kube-provisioner/testenv/testing';
import { type KubernetesObject, loadAllYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditReport } from '../src/audit.ts';
import { exitClean, exitError, exitFindings } from '../src/run-cli.ts';

const env = useTestEnv();
const guest = useGuest();
const packageDir = join(import.meta.dirname, '..');
// A loaded host slows the one-CPU guest several times over.
const timeoutMs = 240_000;
let program = '';
let kubeconfig = '';
let fileSystem: QuotaFileSystem | undefined;

beforeAll(async () => {
  if (!guestAvailable()) return;
  const vm = await guest();
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  const account = await env.serviceAccountKubeconfig({
    namespace: 'kube-provisioner-audit',
    name: 'kube-provisioner-audit',
  });
  const outfile = join(vm.shareDir, 'bin', 'kube-provisioner-audit.mjs');
  await bundleProgram({ entry: join(packageDir, 'src', 'cli.ts'), outfile });
  program = vm.guestPath(outfile);
  kubeconfig = await vm.kubeconfig(account.kubeconfigPath);
  fileSystem = await createQuotaFileSystem(vm, { type: 'xfs' });
}, 300_000);

afterAll(async () => {
  await fileSystem?.remove();
});

/** Runs the audit in the guest on `root` for a provisioner without PVs. */
async function audit(vm: Guest, root: string, extra: readonly string[]) {
  const args = ['--kind', 'hostpath', '--root', root, '--grace', '0s', '--output', 'json'];
  return vm.run(
    [
      'node',
      program,
      '--kubeconfig',
      kubeconfig,
      '--provisioner-name',
      `e2e.kube-provisioner.io/${uniqueName('quota-audit')}`,
      ...args,
      ...extra,
    ],
    { timeoutMs },
  );
}

describe.skipIf(!guestAvailable())(
  'kube-provisioner-audit --quota-projects on a root with project quotas',
  () => {
    it('reports a quota project that no volume holds, and only with the flag', {
      timeout: 2 * timeoutMs,
    }, async () => {
      const vm = await guest();
      const mountPoint = fileSystem?.mountPoint ?? '';
      const root = `${mountPoint}/volumes`;
      await vm.sh('mkdir -p "$1"', { args: [root] });
      // What an interrupted create of an enforced volume leaves: a limit on a project ID, no record.
      await vm.sh('xfs_quota -x -c "limit -p bhard=8m 4242" "$1"', { args: [mountPoint] });

      const without = await audit(vm, root, []);
      expect(without.stderr).toBe('');
      expect(without.status).toBe(exitClean);

      const withProjects = await audit(vm, root, ['--quota-projects']);
      expect(withProjects.stderr).toBe('');
      expect(withProjects.status).toBe(exitFindings);
      const report = JSON.parse(withProjects.stdout) as AuditReport;
      expect(report.findings).toEqual([
        {
          kind: 'project-without-volume',
          pvs: [],
          message:
            "quota project 4242 has usage or limits on the root's file system, but no volume's ownership record holds it",
        },
      ]);
    });

    it('stops with the reason on a root without project quotas', { timeout: timeoutMs }, async () => {
      const vm = await guest();
      await vm.sh('mkdir -p /tmp/plain-root');
      const result = await audit(vm, '/tmp/plain-root', ['--quota-projects']);
      expect(result.status).toBe(exitError);
      expect(result.stderr).toMatch(/cannot read quota projects: the root \/tmp\/plain-root is on \w+/u);
      expect(result.stdout).toBe('');
    });
  },
);
