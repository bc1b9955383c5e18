import { describe, expect, it } from 'vitest';
import type { ScaleImplementation, ScaleResult, ScaleRun, ScaleStep } from '../src/report.ts';
import { scaleGrowth, scaleTables } from '../src/scale-table.ts';

function run(implementation: ScaleImplementation, round: number, rssMb: number, syncS: number): ScaleRun {
  return {
    implementation,
    round,
    startup_ready_s: syncS,
    rss_ready_mb: rssMb,
    pvs_seen: 1000,
    seconds_to_all_pv: 10,
    claims_per_s: 100,
    rss_after_provisioning_mb: rssMb + 10,
    peak_rss_mb: rssMb + 20,
  };
}

function step(existingPairs: number, runs: ScaleRun[]): ScaleStep {
  return { existing_pairs: existingPairs, fill_seconds: 60, runs };
}

const small = step(10_000, [
  run('go', 0, 40, 1),
  run('ours', 0, 80, 1.2),
  run('ours', 1, 100, 1.4),
  run('go', 1, 50, 1),
]);
const large = step(100_000, [run('go', 0, 130, 4), run('ours', 0, 260, 10)]);

describe('scaleGrowth', () => {
  it('divides the growth of the medians over the rounds by the pairs added', () => {
    expect(scaleGrowth([small, large])).toEqual({
      // Go: 45 → 130 MiB and 1 → 4 s over 90 000 pairs; ours: 90 → 260 MiB and 1.3 → 10 s.
      go: { rss_ready_bytes_per_pair: 990.32, startup_ready_us_per_pair: 33.33 },
      ours: { rss_ready_bytes_per_pair: 1980.64, startup_ready_us_per_pair: 96.67 },
    });
  });

  it('has nothing to say about one step', () => {
    expect(scaleGrowth([small])).toBeUndefined();
  });
});

describe('scaleTables', () => {
  const result: ScaleResult = {
    claims: 1000,
    rounds: 2,
    qps: 1000,
    burst: 1000,
    binder: 'stopped',
    steps: [{ ...small, control_plane: { etcd_rss_mb: 300, kube_apiserver_rss_mb: 900 } }, large],
    growth: scaleGrowth([small, large]),
  };

  it('gives each step the ranges, the median of the per-round ratios and the goals', () => {
    const [first] = scaleTables(result);
    expect(first?.title).toContain('10000 foreign bound PV/PVC pairs');
    expect(first?.title).toContain('etcd 300 MiB, kube-apiserver 900 MiB RSS');
    expect(first?.rows[0]).toEqual(['RSS when ready', '40 – 50 MiB', '80 – 100 MiB', '2', 'ratio ≤ 1.5 ✘']);
    expect(first?.rows[1]).toEqual(['start → caches synced', '1 s', '1.2 – 1.4 s', '1.3', 'ratio ≤ 1.5 ✔']);
  });

  it('ends with the growth per pair from the first step to the last', () => {
    const growth = scaleTables(result).at(-1);
    expect(growth?.title).toContain('from 10000 to 100000 pairs');
    expect(growth?.rows).toEqual([
      ['RSS when ready', '990.32 bytes', '1980.64 bytes', '2'],
      ['start → caches synced', '33.33 µs', '96.67 µs', '2.9'],
    ]);
  });
});
