import { describe, expect, it } from 'vitest';
import type { UnbundledResult } from '../src/report.ts';
import { unbundledTables } from '../src/unbundled-table.ts';

const result: UnbundledResult = {
  rounds: 2,
  idle_seconds: 5,
  programs: [
    { program: 'Go library v13', install: 'go', rss_synced_mb: [27, 27.1], rss_idle_mb: [27, 27.2] },
    {
      program: 'kube-hostpath-provisioner',
      install: 'now',
      rss_synced_mb: [80, 81],
      rss_idle_mb: [82, 82],
      idle_ratio_to_go: 3.03,
    },
    {
      program: 'kube-hostpath-provisioner',
      install: 'baseline',
      rss_synced_mb: [135, 135],
      rss_idle_mb: [140, 144.3],
      idle_ratio_to_go: 5.26,
    },
  ],
  node_alone_idle_mb: [54.2, 54.3],
  node_alone_idle_ratio_to_go: 2,
  import: [
    {
      install: 'now',
      ms: [290, 292, 300],
      cpu_ms: [178, 179, 180],
      peak_rss_mb: [70.8, 71.4, 71],
      median_ms: 292,
      median_cpu_ms: 179,
    },
  ],
};

describe('unbundledTables', () => {
  it("shows each program's RSS ranges and its ratio to Go, the baseline's marked, then Node.js alone", () => {
    const [rss] = unbundledTables(result);
    expect(rss?.title).toContain('2 round(s), 5 s idle');
    expect(rss?.rows).toEqual([
      ['Go library v13', '27 – 27.1 MiB', '27 – 27.2 MiB', ''],
      ['kube-hostpath-provisioner', '80 – 81 MiB', '82 MiB', '3.03'],
      ['kube-hostpath-provisioner, baseline', '135 MiB', '140 – 144.3 MiB', '5.26'],
      ['Node.js alone: node:http2 imported, idle', '', '54.2 – 54.3 MiB', '2'],
    ]);
  });

  it("shows the import's medians and peak RSS per install", () => {
    const [, imports] = unbundledTables(result);
    expect(imports?.title).toContain('3 fresh processes');
    expect(imports?.rows).toEqual([['now', '292 ms', '179 ms', '70.8 – 71.4 MiB']]);
  });
});
