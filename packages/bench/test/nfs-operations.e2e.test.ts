// The nfs-operations scenario as users run it (`npm run bench`'s entry point as a child process) for
// ours only, with 2 claims, on a kernel NFS mount in the test guest against the shared test cluster.
// It asserts the report's shape and that every claim was provisioned and deleted, never the figures:
// they are reported in docs/benchmarks.md, not a test's business.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { guestAvailable, nfsToolsAvailable, useTestEnv } from '@kube-provisioner/testenv/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchReport } from '../src/report.ts';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
const claims = 2;

describe.skipIf(!nfsToolsAvailable() || !guestAvailable())(
  'npm run bench -- --scenario nfs-operations (2 claims, ours)',
  () => {
    const env = useTestEnv();
    let outDir: string | undefined;
    afterAll(async () => {
      if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
    });

    it('provisions and deletes every claim on a kernel NFS mount and reports its operations', async () => {
      outDir = await mkdtemp(join(tmpdir(), 'nfs-operations-'));
      const out = join(outDir, 'report.json');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--conditions=@kube-provisioner/source',
          cli,
          '--scenario=nfs-operations',
          `--claims=${claims}`,
          `--out=${out}`,
        ],
        {
          env: { ...process.env, TESTENV_KUBECONFIG: env.kubeconfigPath },
          maxBuffer: 16 * 1024 * 1024,
          timeout: 170_000,
        },
      );
      const report = JSON.parse(await readFile(out, 'utf8')) as BenchReport;
      // Only the hostpath scenarios run the hostpath CLI: this report has no build of it.
      expect(report.ours_build).toBeUndefined();
      const result = report.scenarios.nfs_operations;
      expect(result?.claims).toBe(claims);
      expect(result?.results.map((entry) => entry.implementation)).toEqual(['ours']);
      const [ours] = result?.results ?? [];
      expect(ours?.bound).toBe(claims);
      expect(ours?.deleted).toBe(claims);
      // Every provision makes its directory (CREATE) and every delete removes one (REMOVE).
      expect(ours?.provision.CREATE).toBeGreaterThanOrEqual(1);
      expect(ours?.provision.total).toBeGreaterThan(0);
      expect(ours?.delete.REMOVE).toBeGreaterThanOrEqual(1);
      expect(ours?.delete.total).toBeGreaterThan(0);
      expect(ours?.provision_ms_per_claim).toBeGreaterThan(0);
      expect(stdout).toMatch(/NFS operations per claim/u);
    }, 180_000);
  },
);
