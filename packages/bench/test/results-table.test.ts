import { describe, expect, it } from 'vitest';
import { formatNumber } from '../src/grid-table.ts';
import type { BenchReport, ScenarioResults } from '../src/report.ts';
import { renderReport, renderTable, scenarioTables } from '../src/results-table.ts';

const burst = {
  claims: 1000,
  seconds_to_all_pv: 50.123,
  seconds_to_all_bound: 55,
  seconds_to_all_annotated: 20,
  claims_per_s: 19.95,
  latency_ms: { p50: 900, p95: 1800, p99: 2500, max: 3000 },
  annotated_to_pv_ms: { p50: 400, p95: 800, p99: 1200, max: 1500 },
  peak_rss_mb: 120.5,
  cpu_s: 12.3,
};

describe('formatNumber', () => {
  it('rounds without trailing zeros', () => {
    expect(formatNumber(1.5)).toBe('1.5');
    expect(formatNumber(2)).toBe('2');
    expect(formatNumber(0.12345)).toBe('0.12');
    expect(formatNumber(1.25, 1)).toBe('1.3');
  });
});

describe('scenarioTables', () => {
  it('marks targets met and missed', () => {
    const results: ScenarioResults = {
      burst,
      ceiling: { pvs: 1000, concurrency: 4, seconds: 10, ceiling_pv_per_s: 100, ratio_to_ceiling: 0.2 },
    };
    const [burstTable, ceilingTable] = scenarioTables(results);
    expect(burstTable?.rows.find((row) => row.metric.endsWith('p99'))).toEqual({
      metric: 'claim → PV latency p99',
      value: '2500 ms',
      target: '< 2000 ms ✘',
    });
    expect(burstTable?.rows.find((row) => row.metric === 'annotated → PV latency p99')?.value).toBe(
      '1200 ms',
    );
    expect(ceilingTable?.rows.at(-1)).toEqual({ metric: 'burst / ceiling', value: '0.2', target: '≥ 0.8 ✘' });
  });

  it('leaves out scenarios that did not run', () => {
    expect(scenarioTables({})).toEqual([]);
  });
});

describe('renderTable', () => {
  it('renders an aligned Markdown table under a bold title', () => {
    const text = renderTable({
      title: 'demo',
      rows: [
        { metric: 'a', value: '1 s', target: '' },
        { metric: 'longer', value: '22 s', target: '≤ 5 s ✘' },
      ],
    });
    expect(text).toBe(
      [
        '**demo**',
        '',
        '| metric | value | target  |',
        '| ------ | ----- | ------- |',
        '| a      | 1 s   |         |',
        '| longer | 22 s  | ≤ 5 s ✘ |',
      ].join('\n'),
    );
  });
});

describe('renderReport', () => {
  it('starts with the run conditions, then the tables', () => {
    const report: BenchReport = {
      machine: { cores: 2, cpu_model: 'Test CPU', memory_mb: 4096 },
      load_average: { start: [0.5, 1, 1.25], end: [1, 1, 1] },
      node_version: 'v24.0.0',
      kubernetes_version: 'v1.36.3',
      git_commit: 'abc123',
      started_at: '2026-01-01T00:00:00.000Z',
      ours_build: 'image',
      provisioner_flags: [],
      scenarios: { burst },
    };
    const [conditions, table] = renderReport(report).split('\n\n');
    expect(conditions).toBe(
      '2 cores (Test CPU), 4 GiB, Node v24.0.0, Kubernetes v1.36.3, commit abc123, ' +
        'load average 0.5 1 1.25 at start, 1 1 1 at end, ours bundled as in its image',
    );
    expect(table).toBe('**burst: 1000 claims**');
    const tuned: BenchReport = {
      ...report,
      ours_build: 'sources',
      provisioner_flags: ['--max-semi-space-size=2', '--kube-api-qps=100'],
    };
    expect(renderReport(tuned).split('\n\n')[0]).toMatch(
      /at end, ours from TypeScript sources, provisioner flags --max-semi-space-size=2 --kube-api-qps=100$/,
    );
    const { ours_build: _build, provisioner_flags: _flags, ...withoutHostpath } = report;
    expect(renderReport(withoutHostpath).split('\n\n')[0]).toMatch(/, 1 1 1 at end$/);
    const onTmpfs: BenchReport = { ...report, volume_dir: { path: '/dev/shm', file_system: 'tmpfs' } };
    expect(renderReport(onTmpfs).split('\n\n')[0]).toMatch(
      /ours bundled as in its image, volume roots in \/dev\/shm \(tmpfs\)$/,
    );
  });

  it("renders the nfs-operations table after the other scenarios' tables", () => {
    const nfs = {
      claims: 2,
      results: [
        {
          implementation: 'ours' as const,
          provision: { CREATE: 1, total: 1 },
          delete: { REMOVE: 1, total: 1 },
          bound: 2,
          deleted: 2,
          provision_ms_per_claim: 400,
          delete_ms_per_claim: 900,
        },
      ],
    };
    const report: BenchReport = {
      machine: { cores: 2, cpu_model: 'Test CPU', memory_mb: 4096 },
      load_average: { start: [1, 1, 1], end: [1, 1, 1] },
      node_version: 'v24.0.0',
      kubernetes_version: 'v1.36.3',
      git_commit: 'abc123',
      started_at: '2026-01-01T00:00:00.000Z',
      scenarios: { burst, nfs_operations: nfs },
    };
    const text = renderReport(report);
    expect(text.indexOf('**burst: 1000 claims**')).toBeLessThan(text.indexOf('NFS operations per claim'));
  });
});
