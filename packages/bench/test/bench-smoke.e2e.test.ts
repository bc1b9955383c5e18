// The bench as users run it (`npm run bench`'s entry point as a child process) with a handful of
// claims against the shared test cluster (its control plane's processes named by TESTENV_DIR), so
// every scenario, the Go reference build and the report keep working. It asserts that figures were
// produced, never what they are: speed is the bench's business, not a test's.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchReport } from '../src/report.ts';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
/** A cold build of the Go reference (client-go and the Go library) dominates; later runs hit the cache. */
const smokeTimeoutMs = 20 * 60_000;

describe('npm run bench (smoke, 4 claims)', () => {
  const env = useTestEnv();
  let outDir: string | undefined;
  afterAll(async () => {
    if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
  });

  it(
    'runs burst, ceiling, delete and the Go comparison, and writes the report and both charts',
    async () => {
      outDir = await mkdtemp(join(tmpdir(), 'bench-smoke-'));
      const { dir: controlPlaneDir } = await env.controlPlane();
      const out = join(outDir, 'results.json');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--conditions=@kube-provisioner/source',
          cli,
          '--claims=4',
          '--rounds=1',
          '--scenario=burst,ceiling,delete,compare',
          `--out=${out}`,
        ],
        {
          env: { ...process.env, TESTENV_KUBECONFIG: env.kubeconfigPath, TESTENV_DIR: controlPlaneDir },
          maxBuffer: 16 * 1024 * 1024,
          timeout: smokeTimeoutMs,
        },
      );
      const report = JSON.parse(await readFile(out, 'utf8')) as BenchReport;
      const { burst, ceiling, delete: deletion, compare } = report.scenarios;
      expect(burst?.claims).toBe(4);
      // Scraped from the provisioner's prom-client metrics: a reading of 0 is possible, none is not.
      expect(burst?.event_loop_delay_p99_ms).toBeGreaterThanOrEqual(0);
      expect(ceiling?.ceiling_pv_per_s).toBeGreaterThan(0);
      expect(deletion?.claims).toBe(4);
      expect(compare?.go).toHaveLength(1);
      expect(compare?.ours).toHaveLength(1);
      expect(compare?.library).toHaveLength(1);
      // Go has no event loop; both of ours report theirs.
      expect(compare?.go[0]?.burst.event_loop_delay_p99_ms).toBeUndefined();
      for (const round of [...(compare?.ours ?? []), ...(compare?.library ?? [])]) {
        expect(round.burst.event_loop_delay_p99_ms).toBeGreaterThanOrEqual(0);
      }
      for (const round of [...(compare?.go ?? []), ...(compare?.ours ?? []), ...(compare?.library ?? [])]) {
        expect(round.backlog.claims).toBe(4);
        // Read from /proc in clock ticks (10 ms): a 4-claim backlog can fit inside one, so 0 is a reading.
        expect(round.backlog.control_plane_cpu_ms_per_claim).toBeGreaterThanOrEqual(0);
        expect(round.backlog.cpu_system_ms_per_claim).toBeGreaterThanOrEqual(0);
        expect(round.backlog.cpu_system_ms_per_claim).toBeLessThanOrEqual(round.backlog.cpu_ms_per_claim);
        // Cluster-wide counts: test files running beside this one may add PV creates of their own.
        expect(round.backlog.api_requests_per_claim?.['POST persistentvolumes']).toBeGreaterThanOrEqual(1);
        expect(round.burst.claims).toBe(4);
        expect(round.delete.claims).toBe(4);
        expect(round.rss_idle_mb).toBeGreaterThan(0);
        expect(round.rss_idle_file_mb).toBeGreaterThan(0);
        expect(round.rss_idle_file_mb).toBeLessThan(round.rss_idle_mb);
      }
      // The bare clients run as processes of their own and report their CPU (rusage, not clock ticks).
      for (const round of [
        ...(compare?.go ?? []),
        ...(compare?.ours ?? []),
        ...(compare?.node_http2 ?? []),
      ]) {
        const { pv_per_s, cpu_ms_per_pv } =
          'pv_per_s' in round
            ? round
            : { pv_per_s: round.ceiling_pv_per_s, cpu_ms_per_pv: round.ceiling_cpu_ms_per_pv };
        expect(pv_per_s).toBeGreaterThan(0);
        expect(cpu_ms_per_pv).toBeGreaterThan(0);
      }
      expect(compare?.node_http2).toHaveLength(1);
      // The library example's bare client is ours: it has no ceiling of its own.
      expect(compare?.library?.[0]).not.toHaveProperty('ceiling_pv_per_s');
      expect(stdout).toContain('bare node:http2, no client code');
      expect(stdout).toContain('ours ÷ Go (median)');
      expect(stdout).toContain('library alone ÷ Go (median)');
      expect(await readFile(out.replace(/\.json$/, '.svg'), 'utf8')).toContain('<svg');
      const timeline = await readFile(out.replace(/\.json$/, '-timeline.svg'), 'utf8');
      expect(timeline).toContain('Go library v13');
      expect(timeline).toContain('our library alone');
      expect(timeline).toContain('<circle');
    },
    smokeTimeoutMs,
  );
});
