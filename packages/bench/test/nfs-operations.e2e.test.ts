// The NFS-operations scenario as users run it (`src/nfs-operations.ts` as a child process) for ours
// only, with 2 claims, on a kernel NFS mount in the test guest against the shared test cluster. It
// asserts the report's shape and that every claim was provisioned and deleted, never the figures:
// they are reported in docs/benchmarks.md, not a test's business.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { guestAvailable, nfsToolsAvailable, useTestEnv } from '@kube-provisioner/testenv/testing';
import { afterAll, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', 'src', 'nfs-operations.ts');
const claims = 2;

interface Report {
  readonly claims: number;
  readonly results: ReadonlyArray<{
    readonly implementation: string;
    readonly provision: Record<string, number>;
    readonly delete: Record<string, number>;
    readonly bound: number;
    readonly deleted: number;
    readonly provisionMsPerClaim: number;
    readonly deleteMsPerClaim: number;
  }>;
}

describe.skipIf(!nfsToolsAvailable() || !guestAvailable())(
  'NFS operations per claim (2 claims, ours)',
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
        ['--conditions=@kube-provisioner/source', script, `--claims=${claims}`, `--out=${out}`],
        { env: { ...process.env, TESTENV_KUBECONFIG: env.kubeconfigPath }, timeout: 170_000 },
      );
      const report = JSON.parse(await readFile(out, 'utf8')) as Report;
      expect(report.claims).toBe(claims);
      expect(report.results.map((result) => result.implementation)).toEqual(['ours']);
      const [ours] = report.results;
      expect(ours?.bound).toBe(claims);
      expect(ours?.deleted).toBe(claims);
      // Every provision makes its directory (CREATE) and every delete removes one (REMOVE).
      expect(ours?.provision.CREATE).toBeGreaterThanOrEqual(1);
      expect(ours?.provision.total).toBeGreaterThan(0);
      expect(ours?.delete.REMOVE).toBeGreaterThanOrEqual(1);
      expect(ours?.delete.total).toBeGreaterThan(0);
      expect(ours?.provisionMsPerClaim).toBeGreaterThan(0);
      expect(stdout).toMatch(/NFS operations per claim/u);
    }, 180_000);
  },
);
