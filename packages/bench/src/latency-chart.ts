/**
 * The burst's latency distribution as a standalone SVG: the cumulative share of claims (y) whose
 * claim → PV latency is at most x, with p50/p95/p99 marked. A CDF shows the whole distribution,
 * including the queueing tail a histogram's bins would hide.
 */
import { percentile } from './percentiles.ts';

/** Options of {@link latencyCdfSvg}. */
export interface LatencyChartOptions {
  readonly title: string;
  /** Default 720. */
  readonly width?: number;
  /** Default 400. */
  readonly height?: number;
}

const margin = { top: 40, right: 24, bottom: 48, left: 56 };
/** Most points drawn; larger samples are thinned to evenly spaced ranks, which keeps the shape. */
const maxPoints = 500;

/** Escapes text for an SVG text node or attribute. */
export function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[char] ?? char,
  );
}

/** A "nice" axis maximum at or above `value`: 1, 2 or 5 times a power of ten. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((factor) => factor * power >= value) ?? 10;
  return step * power;
}

/**
 * An SVG document plotting the empirical CDF of `latenciesMs`.
 *
 * @throws RangeError for an empty sample.
 */
export function latencyCdfSvg(latenciesMs: readonly number[], options: LatencyChartOptions): string {
  if (latenciesMs.length === 0) throw new RangeError('latency chart of an empty sample');
  const width = options.width ?? 720;
  const height = options.height ?? 400;
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const xMax = niceCeiling(sorted[sorted.length - 1] as number);
  const x = (ms: number): number => margin.left + (ms / xMax) * plotWidth;
  const y = (share: number): number => margin.top + (1 - share) * plotHeight;
  const fixed = (value: number): string => value.toFixed(1);

  const stride = Math.max(1, Math.ceil(sorted.length / maxPoints));
  const points: string[] = [`${fixed(x(0))},${fixed(y(0))}`];
  for (let index = 0; index < sorted.length; index += stride) {
    points.push(`${fixed(x(sorted[index] as number))},${fixed(y((index + 1) / sorted.length))}`);
  }
  points.push(`${fixed(x(sorted[sorted.length - 1] as number))},${fixed(y(1))}`);

  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const xTicks = ticks.map((share) => share * xMax);
  const markers = [50, 95, 99].map((p) => ({ p, ms: percentile(sorted, p) }));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
    // Screen readers announce the chart by its <title>.
    `<title>${escapeXml(options.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(options.title)}</text>`,
    ...ticks.map(
      (share) =>
        `<line x1="${margin.left}" x2="${width - margin.right}" y1="${fixed(y(share))}" y2="${fixed(y(share))}" stroke="#ddd"/>` +
        `<text x="${margin.left - 6}" y="${fixed(y(share) + 4)}" text-anchor="end">${share * 100}%</text>`,
    ),
    ...xTicks.map(
      (ms) =>
        `<text x="${fixed(x(ms))}" y="${height - margin.bottom + 18}" text-anchor="middle">${Math.round(ms)}</text>`,
    ),
    `<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">claim created → PV created (ms)</text>`,
    `<text transform="translate(14 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">claims</text>`,
    `<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="black"/>`,
    `<line x1="${margin.left}" x2="${width - margin.right}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight}" stroke="black"/>`,
    ...markers.map(
      ({ p, ms }, index) =>
        `<line x1="${fixed(x(ms))}" x2="${fixed(x(ms))}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#c33" stroke-dasharray="4 3"/>` +
        `<text x="${fixed(x(ms) - 4)}" y="${margin.top + 12 + index * 14}" text-anchor="end" fill="#c33">p${p} ${Math.round(ms)} ms</text>`,
    ),
    `<polyline fill="none" stroke="#1f5fbf" stroke-width="2" points="${points.join(' ')}"/>`,
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}
