/**
 * Latency percentiles by the nearest-rank method: every reported figure is a latency some claim
 * actually had, never an interpolation between two claims.
 */

/** Per-claim latency summary in milliseconds. */
export interface LatencySummary {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * The `p`-th percentile (0 < p ≤ 100) of `sorted`, which must be in ascending order: the smallest
 * value with at least p % of the sample at or below it.
 *
 * @throws RangeError for an empty sample or a percentile outside (0, 100].
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of an empty sample');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1] as number;
}

/**
 * p50, p95, p99 and max of `values` (any order), rounded to whole milliseconds.
 *
 * @throws RangeError for an empty sample.
 */
export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => Math.round(percentile(sorted, p));
  return { p50: at(50), p95: at(95), p99: at(99), max: at(100) };
}
