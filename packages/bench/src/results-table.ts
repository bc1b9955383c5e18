/**
 * Renders bench results as Markdown tables, one per scenario, with the issue's targets beside the
 * figures they apply to. The same text goes to the terminal and into docs/benchmarks.md.
 */
import { compareTable } from './compare-table.ts';
import { formatNumber, renderGrid } from './grid-table.ts';
import { nfsOperationsTable } from './nfs-operations-table.ts';
import type { BenchReport, ScenarioResults } from './report.ts';
import { scaleTables } from './scale-table.ts';
import { unbundledTables } from './unbundled-table.ts';

/** One line of a scenario table. */
export interface TableRow {
  readonly metric: string;
  readonly value: string;
  /** The target and whether it was met, e.g. `< 2000 ms ✔`; empty when there is none. */
  readonly target: string;
}

/** A scenario's title and its rows. */
export interface ScenarioTable {
  readonly title: string;
  readonly rows: readonly TableRow[];
}

function row(metric: string, value: number, unit = '', target = ''): TableRow {
  return { metric, value: `${formatNumber(value)}${unit === '' ? '' : ` ${unit}`}`, target };
}

function targetAtMost(value: number, limit: number, text: string): string {
  return `${text} ${value <= limit ? '✔' : '✘'}`;
}

/** The tables of every scenario present in `results`, in run order. */
export function scenarioTables(results: ScenarioResults): ScenarioTable[] {
  const tables: ScenarioTable[] = [];
  const { burst, ceiling, delete: deletion } = results;
  if (burst !== undefined) {
    const { latency_ms: latency } = burst;
    tables.push({
      title: `burst: ${burst.claims} claims`,
      rows: [
        row('first create → last PV', burst.seconds_to_all_pv, 's'),
        row('first create → last claim annotated (PV controller)', burst.seconds_to_all_annotated, 's'),
        row('first create → last claim Bound', burst.seconds_to_all_bound, 's'),
        row('throughput', burst.claims_per_s, 'claims/s'),
        row('claim → PV latency p50', latency.p50, 'ms'),
        row('claim → PV latency p95', latency.p95, 'ms'),
        row('claim → PV latency p99', latency.p99, 'ms', targetAtMost(latency.p99, 2000, '< 2000 ms')),
        row('claim → PV latency max', latency.max, 'ms'),
        row('annotated → PV latency p50', burst.annotated_to_pv_ms.p50, 'ms'),
        row('annotated → PV latency p99', burst.annotated_to_pv_ms.p99, 'ms'),
        row('provisioner peak RSS', burst.peak_rss_mb, 'MiB'),
        row('provisioner CPU', burst.cpu_s, 's'),
      ],
    });
  }
  if (ceiling !== undefined) {
    const ratioTarget = `≥ 0.8 ${ceiling.ratio_to_ceiling >= 0.8 ? '✔' : '✘'}`;
    tables.push({
      title: `ceiling: ${ceiling.pvs} PVs by a bare client, ${ceiling.concurrency} at a time`,
      rows: [
        row('duration', ceiling.seconds, 's'),
        row('API server ceiling', ceiling.ceiling_pv_per_s, 'PV/s'),
        row('burst / ceiling', ceiling.ratio_to_ceiling, '', ratioTarget),
      ],
    });
  }
  if (deletion !== undefined) {
    tables.push({
      title: `delete: ${deletion.claims} claims deleted at once`,
      rows: [
        row('first delete → last PV gone', deletion.seconds_to_all_pv_deleted, 's'),
        row('first delete → last directory gone', deletion.seconds_to_all_dirs_deleted, 's'),
        row('throughput', deletion.claims_per_s, 'claims/s'),
        row('provisioner CPU', deletion.cpu_s, 's'),
      ],
    });
  }
  return tables;
}

/** A Markdown table of one scenario, preceded by its title in bold. */
export function renderTable(table: ScenarioTable): string {
  return renderGrid({
    title: table.title,
    header: ['metric', 'value', 'target'],
    rows: table.rows.map((r) => [r.metric, r.value, r.target]),
  });
}

/** Every scenario table of a report, and a line describing the run's conditions. */
export function renderReport(report: BenchReport): string {
  const { machine, load_average: load } = report;
  const conditions =
    `${machine.cores} cores (${machine.cpu_model}), ${formatNumber(machine.memory_mb / 1024, 1)} GiB, ` +
    `Node ${report.node_version}, Kubernetes ${report.kubernetes_version}, commit ${report.git_commit}, ` +
    `load average ${load.start.map((value) => formatNumber(value)).join(' ')} at start, ` +
    `${load.end.map((value) => formatNumber(value)).join(' ')} at end` +
    (report.ours_build === undefined
      ? ''
      : `, ours ${report.ours_build === 'image' ? 'bundled as in its image' : 'from TypeScript sources'}`) +
    (report.provisioner_flags === undefined || report.provisioner_flags.length === 0
      ? ''
      : `, provisioner flags ${report.provisioner_flags.join(' ')}`) +
    (report.volume_dir === undefined
      ? ''
      : `, volume roots in ${report.volume_dir.path} (${report.volume_dir.file_system})`);
  const { compare, scale, nfs_operations: nfsOperations, unbundled } = report.scenarios;
  return [
    conditions,
    ...scenarioTables(report.scenarios).map(renderTable),
    ...(scale === undefined ? [] : scaleTables(scale).map(renderGrid)),
    ...(compare === undefined ? [] : [renderGrid(compareTable(compare))]),
    ...(nfsOperations === undefined ? [] : [renderGrid(nfsOperationsTable(nfsOperations))]),
    ...(unbundled === undefined ? [] : unbundledTables(unbundled).map(renderGrid)),
  ].join('\n\n');
}
