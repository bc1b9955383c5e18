/**
 * Latency over time for several provisioners as a standalone SVG: one dot per claim at (when the
 * claim was seen annotated, relative to the first annotation of its run; how long until its PV).
 * Where a CDF hides when the waiting happened, this shows whether a provisioner follows the
 * annotation stream or falls behind it.
 */
import { escapeXml, niceCeiling } from './latency-chart.ts';

/** One series: a name and its points (ms since the run's first annotation, latency in ms). */
export interface LatencySeries {
  readonly name: string;
  readonly color: string;
  readonly points: readonly { readonly at: number; readonly latencyMs: number }[];
}

const width = 720;
const height = 400;
const margin = { top: 40, right: 24, bottom: 48, left: 64 };
/** Most dots per series; larger series are thinned evenly, which keeps the shape. */
const maxPoints = 1000;

/**
 * An SVG document plotting every series' latency over time.
 *
 * @throws RangeError when no series has a point.
 */
export function latencyTimelineSvg(series: readonly LatencySeries[], title: string): string {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) throw new RangeError('latency timeline without points');
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const xMax = niceCeiling(Math.max(...all.map((p) => p.at)) / 1000);
  const yMax = niceCeiling(Math.max(...all.map((p) => p.latencyMs)));
  const x = (s: number): number => margin.left + (s / xMax) * plotWidth;
  const y = (ms: number): number => margin.top + (1 - ms / yMax) * plotHeight;
  const fixed = (value: number): string => value.toFixed(1);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const dots = series.map((s) => {
    const stride = Math.max(1, Math.ceil(s.points.length / maxPoints));
    const circles = s.points
      .filter((_, index) => index % stride === 0)
      .map((p) => `<circle cx="${fixed(x(p.at / 1000))}" cy="${fixed(y(p.latencyMs))}" r="1.8"/>`);
    return `<g fill="${s.color}" fill-opacity="0.6">${circles.join('')}</g>`;
  });
  const legend = series.map(
    (s, index) =>
      `<rect x="${margin.left + 10}" y="${margin.top + 8 + index * 16}" width="10" height="10" fill="${s.color}"/>` +
      `<text x="${margin.left + 26}" y="${margin.top + 17 + index * 16}">${escapeXml(s.name)}</text>`,
  );
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
    ...ticks.map(
      (share) =>
        `<line x1="${margin.left}" x2="${width - margin.right}" y1="${fixed(y(share * yMax))}" y2="${fixed(y(share * yMax))}" stroke="#ddd"/>` +
        `<text x="${margin.left - 6}" y="${fixed(y(share * yMax) + 4)}" text-anchor="end">${Math.round(share * yMax)}</text>`,
    ),
    ...ticks.map(
      (share) =>
        `<text x="${fixed(x(share * xMax))}" y="${height - margin.bottom + 18}" text-anchor="middle">${formatTick(share * xMax)}</text>`,
    ),
    `<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">claim annotated, s after the first annotation</text>`,
    `<text transform="translate(14 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">annotated → PV (ms)</text>`,
    `<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="black"/>`,
    `<line x1="${margin.left}" x2="${width - margin.right}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight}" stroke="black"/>`,
    ...dots,
    ...legend,
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

function formatTick(value: number): string {
  return String(Number(value.toFixed(2)));
}
