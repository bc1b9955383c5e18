import { describe, expect, it } from 'vitest';
import { roundOrder } from '../src/compare.ts';
import { compareTable, median } from '../src/compare-table.ts';
import type { CompareResult, ImplementationRound, LibraryRound } from '../src/report.ts';

function implementationRound(scale: number): ImplementationRound {
  const latency = { p50: 100 * scale, p95: 200 * scale, p99: 300 * scale, max: 400 * scale };
  return {
    startup_s: 1 * scale,
    rss_idle_mb: 40 * scale,
    rss_idle_file_mb: 30 * scale,
    burst: {
      claims: 10,
      seconds_to_all_pv: 2,
      seconds_to_all_bound: 3,
      seconds_to_all_annotated: 1.9,
      claims_per_s: 5,
      latency_ms: latency,
      annotated_to_pv_ms: latency,
      peak_rss_mb: 50 * scale,
      cpu_s: 0.1,
    },
    burst_cpu_ms_per_claim: 10 * scale,
    burst_lag_after_annotation: 0.05,
    delete: {
      claims: 10,
      seconds_to_all_pv_deleted: 1,
      seconds_to_all_dirs_deleted: 1,
      claims_per_s: 10,
      cpu_s: 0.1,
    },
    backlog: {
      claims: 10,
      startup_s: 1,
      seconds_from_ready: 1,
      claims_per_s: 100 / scale,
      cpu_ms_per_claim: 2 * scale,
      cpu_system_ms_per_claim: 0.5 * scale,
      events_per_claim_at_last_pv: 2 / scale,
      peak_rss_mb: 60 * scale,
    },
    ceiling_pv_per_s: 400 / scale,
    ceiling_cpu_ms_per_pv: 0.3 * scale,
  };
}

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(RangeError);
  });
});

const result: CompareResult = {
  claims: 10,
  qps: 1000,
  burst: 1000,
  workers: 4,
  go: [implementationRound(1), implementationRound(1)],
  // Ours twice Go's cost in round 1, equal in round 2: the median ratio is 1.5.
  ours: [implementationRound(2), implementationRound(1)],
};

describe('compareTable', () => {
  it('shows each side as a range over rounds and the median of per-round ratios', () => {
    const table = compareTable(result);
    const backlogCpu = table.rows.find((row) => row[0] === 'backlog: CPU per claim');
    expect(backlogCpu).toEqual(['backlog: CPU per claim', '2 ms', '2 – 4 ms', '1.5', 'ratio ≤ 1.5 ✔']);
    const throughput = table.rows.find((row) => row[0] === 'backlog: claims/s from ready');
    expect(throughput?.[3]).toBe('0.75');
    expect(throughput?.[4]).toBe('ratio ≥ 1.2 ✘');
    expect(table.header).toEqual([
      'metric',
      'Go v13 (range)',
      'ours (range)',
      'ours ÷ Go (median)',
      'target',
    ]);
  });

  it('shows how many claim events each side had written by its last PV, with no target', () => {
    const row = compareTable(result).rows.find((r) => r[0]?.startsWith('backlog: claim events written'));
    expect(row?.slice(1)).toEqual(['2', '1 – 2', '0.75', '']);
  });

  it('gives a missed ratio to three decimals when two would show it equal to the target', () => {
    const rate = (pvPerS: number): ImplementationRound => ({
      ...implementationRound(1),
      ceiling_pv_per_s: pvPerS,
    });
    const row = (oursPvPerS: number) =>
      compareTable({ ...result, go: [rate(1000)], ours: [rate(oursPvPerS)] }).rows.find((r) =>
        r[0]?.startsWith('bare client: PV creates/s'),
      );
    expect(row(898)?.slice(3)).toEqual(['0.9', 'ratio ≥ 0.9 ✘ (0.898)']);
    expect(row(900)?.slice(3)).toEqual(['0.9', 'ratio ≥ 0.9 ✔']);
    expect(row(850)?.slice(3)).toEqual(['0.85', 'ratio ≥ 0.9 ✘']);
  });

  it("shows kube-controller-manager's annotation time and claim → PV p99 after the lag, with no target", () => {
    const rows = compareTable(result).rows;
    const index = rows.findIndex((row) => row[0]?.startsWith('burst: last PV after last annotation'));
    expect(rows[index + 1]).toEqual([
      'burst: first create → last claim annotated (by kube-controller-manager)',
      '1.9 s',
      '1.9 s',
      '1',
      '',
    ]);
    expect(rows[index + 2]).toEqual([
      'burst: claim → PV p99 (from creation, the annotation included)',
      '300 ms',
      '300 – 600 ms',
      '1.5',
      '',
    ]);
  });

  it('shows the file-backed part of idle RSS beside it, with no target', () => {
    const rows = compareTable(result).rows;
    const index = rows.findIndex((row) => row[0] === 'RSS idle after caches synced');
    expect(rows[index + 1]).toEqual([
      "of which file-backed (the executable's and libraries' pages in use)",
      '30 MiB',
      '30 – 60 MiB',
      '1.5',
      '',
    ]);
  });

  it('checks absolute targets on our median and start-up against Go plus half a second', () => {
    const rows = compareTable(result).rows;
    // Our idle RSS is 80 and 40 MiB: median 60. Our start-up 2 and 1 s: median 1.5 = Go's 1 + 0.5.
    expect(rows.find((row) => row[0] === 'RSS idle after caches synced')?.[4]).toBe('ours ≤ 70 MiB ✔');
    expect(rows.find((row) => row[0] === 'start → caches synced')?.[4]).toBe('≤ Go + 0.5 s ✔');
    // Our p99 is 600 and 300 ms: median 450.
    expect(rows.find((row) => row[0] === 'burst: annotated → PV p99')?.[4]).toBe('ours ≤ 500 ms ✔');
  });
});

describe('compareTable, event-loop delay', () => {
  const withDelay = (round: ImplementationRound, ms: number | undefined): ImplementationRound => ({
    ...round,
    burst: { ...round.burst, ...(ms === undefined ? {} : { event_loop_delay_p99_ms: ms }) },
  });
  const table = (oursMs: readonly (number | undefined)[]) =>
    compareTable({
      claims: 10,
      qps: 1000,
      burst: 1000,
      workers: 4,
      go: oursMs.map(() => implementationRound(1)),
      ours: oursMs.map((ms) => withDelay(implementationRound(1), ms)),
    });
  const row = (rows: readonly (readonly string[])[]) =>
    rows.find((cells) => cells[0] === "burst: provisioner's event-loop delay p99");

  it("shows ours' range with n/a for Go, which has no event loop, and checks 20 ms on our median", () => {
    expect(row(table([12, 30, 18]).rows)?.slice(1)).toEqual(['n/a', '12 – 30 ms', 'n/a', 'ours ≤ 20 ms ✔']);
    expect(row(table([25, 30]).rows)?.[4]).toBe('ours ≤ 20 ms ✘');
  });

  it('leaves the row out of a report from before it was measured', () => {
    expect(row(table([undefined, undefined]).rows)).toBeUndefined();
  });
});

describe('compareTable, control plane CPU', () => {
  const withControlPlane = (round: ImplementationRound, ms: number | undefined): ImplementationRound => ({
    ...round,
    backlog: { ...round.backlog, control_plane_cpu_ms_per_claim: ms },
  });
  const isControlPlaneRow = (row: readonly string[]) => row[0]?.startsWith('backlog: control plane CPU');
  const oneRoundTable = (goMs: number | undefined, oursMs: number | undefined) =>
    compareTable({
      claims: 10,
      qps: 1000,
      burst: 1000,
      workers: 4,
      go: [withControlPlane(implementationRound(1), goMs)],
      ours: [withControlPlane(implementationRound(1), oursMs)],
    });

  it('shows the control plane CPU per claim beside each side’s own', () => {
    const table = oneRoundTable(4, 9);
    expect(table.rows.find(isControlPlaneRow)?.slice(1)).toEqual(['4 ms', '9 ms', '2.25', '']);
  });

  it('adds the two together, the cores they kept busy, and the control plane’s share', () => {
    // Go: 2 + 6 = 8 ms per claim at 100 claims/s; ours: 2 + 14 = 16 ms.
    const rows = oneRoundTable(6, 14).rows;
    const row = (name: string) => rows.find((r) => r[0] === name)?.slice(1);
    expect(row('backlog: CPU per claim, provisioner and control plane together')).toEqual([
      '8 ms',
      '16 ms',
      '2',
      '',
    ]);
    expect(row('backlog: cores kept busy by the provisioner and the control plane')).toEqual([
      '0.8 cores',
      '1.6 cores',
      '2',
      '',
    ]);
    expect(row("backlog: the control plane's share of that CPU")).toEqual(['0.75', '0.88', '1.17', '']);
  });

  it('leaves the row out when the control plane processes were not known', () => {
    const table = oneRoundTable(undefined, undefined);
    expect(table.rows.find(isControlPlaneRow)).toBeUndefined();
    expect(table.rows.some((row) => row[0]?.includes('control plane'))).toBe(false);
    expect(table.rows.find((row) => row[0] === 'backlog: CPU per claim')?.[1]).toBe('2 ms');
  });
});

describe('compareTable, API requests', () => {
  const withRequests = (requests: Record<string, number> | undefined): ImplementationRound => {
    const round = implementationRound(1);
    return { ...round, backlog: { ...round.backlog, api_requests_per_claim: requests } };
  };
  const requestRows = (go: Record<string, number> | undefined, ours: Record<string, number> | undefined) =>
    compareTable({
      claims: 10,
      qps: 1000,
      burst: 1000,
      workers: 4,
      go: [withRequests(go)],
      ours: [withRequests(ours)],
    })
      .rows.filter((row) => row[0]?.startsWith('backlog: API requests per claim'))
      .map((row) => [row[0]?.replace('backlog: API requests per claim, ', ''), row[1], row[2]]);

  it('shows PV creates, event writes of every component and claim binds per claim for each side', () => {
    const go = {
      'POST persistentvolumes': 1,
      'POST events': 0.5,
      'PATCH events': 0.15,
      'PUT persistentvolumeclaims': 0.11,
    };
    const ours = { 'POST persistentvolumes': 1, 'POST events': 0.8, 'PATCH events': 0.7, 'PUT leases': 0.02 };
    expect(requestRows(go, ours)).toEqual([
      ['PV creates', '1', '1'],
      ['event writes, every component', '0.65', '1.5'],
      ['claim binds by kube-controller-manager', '0.11', '0'],
    ]);
  });

  it('leaves the rows out of a report without request counts', () => {
    expect(requestRows(undefined, undefined)).toEqual([]);
  });
});

describe('compareTable, our library alone', () => {
  const libraryRound = (scale: number): LibraryRound => {
    const { ceiling_pv_per_s: _ceiling, ceiling_cpu_ms_per_pv: _cpu, ...round } = implementationRound(scale);
    return round;
  };
  // The library alone at 1.5 and 1.25 times Go's cost: median ratio 1.375.
  const table = compareTable({ ...result, library: [libraryRound(1.5), libraryRound(1.25)] });

  it('adds its range and its median ratio to Go, before the target, which stays ours', () => {
    expect(table.header).toEqual([
      'metric',
      'Go v13 (range)',
      'ours (range)',
      'ours ÷ Go (median)',
      'library alone (range)',
      'library alone ÷ Go (median)',
      'target',
    ]);
    expect(table.rows.find((row) => row[0] === 'backlog: CPU per claim')).toEqual([
      'backlog: CPU per claim',
      '2 ms',
      '2 – 4 ms',
      '1.5',
      '2.5 – 3 ms',
      '1.38',
      'ratio ≤ 1.5 ✔',
    ]);
  });

  it('sets ours against the library alone for the backlog CPU per claim, with the 1.25 target', () => {
    const row = (rows: readonly (readonly string[])[]) =>
      rows.find((cells) => cells[0] === 'backlog CPU per claim, ours ÷ library alone (in the ratio column)');
    // Ours 4 and 2 ms against 3 and 2.5 ms: per-round ratios 1.33 and 0.8, median 1.07.
    expect(row(table.rows)?.slice(1)).toEqual(['', '2 – 4 ms', '1.07', '2.5 – 3 ms', '', 'ratio ≤ 1.25 ✔']);
    expect(row(compareTable(result).rows)).toBeUndefined();
  });

  it('shows no bare client of its own: it is ours', () => {
    const rows = table.rows.filter((r) => r[0]?.startsWith('bare client'));
    expect(rows.map((row) => row.slice(4, 6))).toEqual([
      ['n/a', 'n/a'],
      ['n/a', 'n/a'],
    ]);
  });

  it('says so in the title', () => {
    expect(table.title).toContain('Go library v13 vs ours and our library alone');
    expect(table.title).toContain('2 rounds rotating');
  });
});

describe('compareTable, system time', () => {
  it('shows the kernel’s part of the backlog CPU right below it', () => {
    const rows = compareTable(result).rows;
    const index = rows.findIndex((row) => row[0] === 'backlog: CPU per claim');
    expect(rows[index + 1]?.[0]).toContain('backlog: of which in the kernel');
    expect(rows[index + 1]?.slice(1)).toEqual(['0.5 ms', '0.5 – 1 ms', '1.5', '']);
  });
});

describe('compareTable, bare clients', () => {
  it('shows each bare client’s CPU per create beside its rate, with no target', () => {
    const row = compareTable(result).rows.find((r) => r[0]?.startsWith('bare client: CPU per PV create'));
    expect(row?.slice(1)).toEqual(['0.3 ms', '0.3 – 0.6 ms', '1.5', '']);
  });

  it('sets node:http2 alone against client-go, round by round, after the metrics', () => {
    const table = compareTable({
      ...result,
      // 1.5 and 2 times client-go's 0.3 ms: median ratio 1.75.
      node_http2: [
        { pv_per_s: 500, cpu_ms_per_pv: 0.45 },
        { pv_per_s: 400, cpu_ms_per_pv: 0.6 },
      ],
    });
    const [rate, cpu] = table.rows.slice(-2);
    expect(rate?.[0]).toContain('bare node:http2, no client code (the runtime floor): PV creates/s');
    // 500 and 400 PV/s against client-go's 400: ratios 1.25 and 1, median 1.13.
    expect(rate?.slice(1)).toEqual(['400 PV/s', '400 – 500 PV/s', '1.13', '']);
    expect(cpu?.[0]).toContain('bare node:http2, no client code (the runtime floor): CPU per PV create');
    expect(cpu?.slice(1)).toEqual(['0.3 ms', '0.45 – 0.6 ms', '1.75', '']);
  });

  it('leaves the node:http2 row out of a report without it', () => {
    expect(compareTable(result).rows.some((r) => r[0]?.includes('node:http2'))).toBe(false);
  });
});

describe('roundOrder', () => {
  it('alternates two implementations and rotates three, each going first in turn', () => {
    expect([0, 1, 2].map((index) => roundOrder(['go', 'ours'], index))).toEqual([
      ['go', 'ours'],
      ['ours', 'go'],
      ['go', 'ours'],
    ]);
    expect([0, 1, 2, 3].map((index) => roundOrder(['go', 'ours', 'library'], index).join())).toEqual([
      'go,ours,library',
      'ours,library,go',
      'library,go,ours',
      'go,ours,library',
    ]);
  });
});
