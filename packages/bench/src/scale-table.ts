/**
 * The scale scenario's figures: per step, the Go library's and our range over the rounds and the
 * median of the per-round ratios ours ÷ Go beside the goals; and the growth per pair from
 * the first step to the last, from the medians over the rounds.
 */
import { median, medianRatio, range, ratioText } from './compare-table.ts';
import { formatNumber, type GridTable } from './grid-table.ts';
import type { ScaleGrowth, ScaleImplementation, ScaleResult, ScaleRun, ScaleStep } from './report.ts';
import { round } from './units.ts';

const bytesPerMib = 1024 * 1024;

/** One figure of a run, with the goal on the ratio ours ÷ Go where it sets one. */
interface Metric {
  readonly name: string;
  readonly unit: string;
  readonly value: (run: ScaleRun) => number;
  readonly maxRatio?: number;
}

const metrics: readonly Metric[] = [
  { name: 'RSS when ready', unit: 'MiB', value: (r) => r.rss_ready_mb, maxRatio: 1.5 },
  { name: 'start → caches synced', unit: 's', value: (r) => r.startup_ready_s, maxRatio: 1.5 },
  { name: 'claims: PVs seen', unit: '', value: (r) => r.pvs_seen },
  { name: 'claims: first create → last PV', unit: 's', value: (r) => r.seconds_to_all_pv ?? Number.NaN },
  { name: 'claims/s', unit: 'claims/s', value: (r) => r.claims_per_s ?? Number.NaN },
  { name: 'RSS after provisioning', unit: 'MiB', value: (r) => r.rss_after_provisioning_mb },
  { name: 'peak RSS', unit: 'MiB', value: (r) => r.peak_rss_mb },
];

/** `implementation`'s runs of `step`, in round order. */
function runsOf(step: ScaleStep, implementation: ScaleImplementation): ScaleRun[] {
  return step.runs.filter((run) => run.implementation === implementation).sort((a, b) => a.round - b.round);
}

/** Median over the rounds of `value` for `implementation` in `step`. */
function stepMedian(
  step: ScaleStep,
  implementation: ScaleImplementation,
  value: (run: ScaleRun) => number,
): number {
  return median(runsOf(step, implementation).map(value));
}

/** Growth per pair from the first step to the last; undefined for fewer than two steps. */
export function scaleGrowth(
  steps: readonly ScaleStep[],
): Readonly<Record<ScaleImplementation, ScaleGrowth>> | undefined {
  const first = steps[0];
  const last = steps.at(-1);
  if (first === undefined || last === undefined || first === last) return undefined;
  const pairs = last.existing_pairs - first.existing_pairs;
  const growth = (implementation: ScaleImplementation): ScaleGrowth => {
    const delta = (value: (run: ScaleRun) => number): number =>
      stepMedian(last, implementation, value) - stepMedian(first, implementation, value);
    return {
      rss_ready_bytes_per_pair: round((delta((r) => r.rss_ready_mb) * bytesPerMib) / pairs),
      startup_ready_us_per_pair: round((delta((r) => r.startup_ready_s) * 1e6) / pairs),
    };
  };
  return { go: growth('go'), ours: growth('ours') };
}

/** The table of one step. */
function stepTable(result: ScaleResult, step: ScaleStep): GridTable {
  const go = runsOf(step, 'go');
  const ours = runsOf(step, 'ours');
  const rows = metrics.map((metric) => {
    const ratio = medianRatio(ours.map(metric.value), go.map(metric.value));
    const goal =
      metric.maxRatio === undefined
        ? ''
        : `ratio ≤ ${metric.maxRatio} ${ratio <= metric.maxRatio ? '✔' : '✘'}`;
    return [
      metric.name,
      range(go.map(metric.value), metric.unit),
      range(ours.map(metric.value), metric.unit),
      ratioText(ratio),
      goal,
    ];
  });
  const memory = step.control_plane;
  const controlPlane =
    memory === undefined
      ? ''
      : `; etcd ${formatNumber(memory.etcd_rss_mb, 0)} MiB, kube-apiserver ${formatNumber(memory.kube_apiserver_rss_mb, 0)} MiB RSS`;
  return {
    title:
      `scale: ${step.existing_pairs} foreign bound PV/PVC pairs (filled in ${formatNumber(step.fill_seconds, 0)} s${controlPlane}), ` +
      `${result.claims} claims per run, ${result.rounds} round(s), QPS ${result.qps} / burst ${result.burst}, ` +
      `PV binder ${result.binder}`,
    header: ['metric', 'Go v13 (range)', 'ours (range)', 'ours ÷ Go (median)', 'goal'],
    rows,
  };
}

/** The growth table; none for fewer than two steps. */
function growthTable(result: ScaleResult): GridTable[] {
  const growth = result.growth;
  const first = result.steps[0];
  const last = result.steps.at(-1);
  if (growth === undefined || first === undefined || last === undefined) return [];
  const cells = (value: (g: ScaleGrowth) => number, unit: string): string[] => [
    `${formatNumber(value(growth.go))} ${unit}`,
    `${formatNumber(value(growth.ours))} ${unit}`,
    ratioText(value(growth.ours) / value(growth.go)),
  ];
  return [
    {
      title: `scale: growth per foreign pair from ${first.existing_pairs} to ${last.existing_pairs} pairs (medians over the rounds)`,
      header: ['metric', 'Go v13', 'ours', 'ours ÷ Go'],
      rows: [
        ['RSS when ready', ...cells((g) => g.rss_ready_bytes_per_pair, 'bytes')],
        ['start → caches synced', ...cells((g) => g.startup_ready_us_per_pair, 'µs')],
      ],
    },
  ];
}

/** The tables of a scale result: one per step, then the growth between the first and the last. */
export function scaleTables(result: ScaleResult): GridTable[] {
  return [...result.steps.map((step) => stepTable(result, step)), ...growthTable(result)];
}
