/**
 * The unbundled scenario as two tables: each program's idle RSS beside Go's with the median of the
 * per-round ratios, and the import of the controller package.
 */
import { range, ratioText } from './compare-table.ts';
import { formatNumber, type GridTable } from './grid-table.ts';
import type { UnbundledResult } from './report.ts';

/** The tables of an unbundled result: RSS, then the import. */
export function unbundledTables(result: UnbundledResult): GridTable[] {
  const programs = result.programs.map((program) => [
    program.install === 'baseline' ? `${program.program}, baseline` : program.program,
    range(program.rss_synced_mb, 'MiB'),
    range(program.rss_idle_mb, 'MiB'),
    program.idle_ratio_to_go === undefined ? '' : ratioText(program.idle_ratio_to_go),
  ]);
  const processes = result.import[0]?.ms.length ?? 0;
  return [
    {
      title:
        `unbundled: idle RSS, plain node with a kubeconfig file, ${result.rounds} round(s), ` +
        `${result.idle_seconds} s idle; ratio: median of the per-round ratios to Go`,
      header: ['program', 'RSS caches synced', 'RSS idle', 'idle ÷ Go (median)'],
      rows: [
        ...programs,
        [
          'Node.js alone: node:http2 imported, idle',
          '',
          range(result.node_alone_idle_mb, 'MiB'),
          ratioText(result.node_alone_idle_ratio_to_go),
        ],
      ],
    },
    {
      title: `unbundled: import('@kube-provisioner/controller'), plain node, ${processes} fresh processes`,
      header: ['install', 'median time', 'median CPU', 'peak RSS'],
      rows: result.import.map((timing) => [
        timing.install,
        `${formatNumber(timing.median_ms)} ms`,
        `${formatNumber(timing.median_cpu_ms)} ms`,
        range(timing.peak_rss_mb, 'MiB'),
      ]),
    },
  ];
}
