/**
 * The nfs-operations scenario as one table: NFS operations per claim by operation, a provision and a
 * delete column per implementation, the totals first and the guest's wall time per claim last.
 */
import { formatNumber, type GridTable } from './grid-table.ts';
import type { NfsOperationsResult } from './report.ts';

/** The table of an nfs-operations result. */
export function nfsOperationsTable(result: NfsOperationsResult): GridTable {
  const { results } = result;
  const operations = new Set<string>();
  for (const { provision, delete: deletion } of results) {
    for (const name of [...Object.keys(provision), ...Object.keys(deletion)]) {
      if (name !== 'total') operations.add(name);
    }
  }
  const row = (name: string): string[] => [
    name,
    ...results.flatMap((r) => [formatNumber(r.provision[name] ?? 0), formatNumber(r.delete[name] ?? 0)]),
  ];
  return {
    title: `nfs-operations: NFS operations per claim on a kernel NFSv4.1 mount, ${result.claims} claims`,
    header: [
      'operation',
      ...results.flatMap(({ implementation }) => [`${implementation} provision`, `${implementation} delete`]),
    ],
    rows: [
      row('total'),
      ...[...operations].sort().map(row),
      ['claims Bound, PVs deleted', ...results.flatMap((r) => [String(r.bound), String(r.deleted)])],
      [
        'ms per claim (User-Mode Linux: indicative only)',
        ...results.flatMap((r) => [String(r.provision_ms_per_claim), String(r.delete_ms_per_claim)]),
      ],
    ],
  };
}
