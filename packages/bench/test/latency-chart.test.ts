import { describe, expect, it } from 'vitest';
import { escapeXml, latencyCdfSvg, niceCeiling } from '../src/latency-chart.ts';

describe('niceCeiling', () => {
  it('rounds up to 1, 2 or 5 times a power of ten', () => {
    expect(niceCeiling(730)).toBe(1000);
    expect(niceCeiling(1001)).toBe(2000);
    expect(niceCeiling(3000)).toBe(5000);
    expect(niceCeiling(5000)).toBe(5000);
    expect(niceCeiling(0.3)).toBe(0.5);
    expect(niceCeiling(0)).toBe(1);
  });
});

describe('escapeXml', () => {
  it('escapes markup characters', () => {
    expect(escapeXml(`<a href="x">&'`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;');
  });
});

describe('latencyCdfSvg', () => {
  const sample = Array.from({ length: 1000 }, (_, index) => index + 1);

  it('is a standalone SVG document with an escaped title', () => {
    const svg = latencyCdfSvg(sample, { title: 'p99 < 2 s & more' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="720" height="400"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('>p99 &lt; 2 s &amp; more</text>');
  });

  it('is an image with an accessible name: role="img" and the title as its first child', () => {
    const svg = latencyCdfSvg(sample, { title: 'p99 < 2 s' });
    const [root, first] = svg.split('\n');
    expect(root).toMatch(/^<svg [^>]* role="img">$/);
    expect(first).toBe('<title>p99 &lt; 2 s</title>');
  });

  it('marks p50, p95 and p99 with their values', () => {
    const svg = latencyCdfSvg(sample, { title: 't' });
    expect(svg).toContain('>p50 500 ms</text>');
    expect(svg).toContain('>p95 950 ms</text>');
    expect(svg).toContain('>p99 990 ms</text>');
  });

  it('draws a rising curve from 0 % to 100 % within the plot, thinned to at most 502 points', () => {
    const svg = latencyCdfSvg(sample, { title: 't', width: 600, height: 300 });
    const list = (/<polyline[^>]* points="([^"]+)"/.exec(svg)?.[1] ?? '')
      .split(' ')
      .map((pair) => pair.split(',').map(Number) as [number, number]);
    // The origin, every second of the 1000 ranks (500 at most), and the final 100 % point.
    expect(list).toHaveLength(502);
    // y grows downwards in SVG: a CDF's points go up (y decreases) as x increases.
    for (let index = 1; index < list.length; index++) {
      const [x0, y0] = list[index - 1] as [number, number];
      const [x1, y1] = list[index] as [number, number];
      expect(x1).toBeGreaterThanOrEqual(x0);
      expect(y1).toBeLessThanOrEqual(y0);
    }
    const [, firstY] = list[0] as [number, number];
    const [, lastY] = list.at(-1) as [number, number];
    expect(firstY).toBe(300 - 48);
    expect(lastY).toBe(40);
  });

  it('refuses an empty sample', () => {
    expect(() => latencyCdfSvg([], { title: 't' })).toThrow(RangeError);
  });
});
