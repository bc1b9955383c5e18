import { describe, expect, it } from 'vitest';
import { nfsOperationsTable } from '../src/nfs-operations-table.ts';
import type { NfsImplementationResult } from '../src/report.ts';

const ours: NfsImplementationResult = {
  implementation: 'ours',
  provision: { CREATE: 1, LOOKUP: 3.55, total: 4.55 },
  delete: { REMOVE: 2, total: 2 },
  bound: 20,
  deleted: 20,
  provision_ms_per_claim: 404,
  delete_ms_per_claim: 2704,
};
const upstream: NfsImplementationResult = {
  implementation: 'upstream',
  provision: { CREATE: 1, total: 1 },
  delete: { ACCESS: 0.95, REMOVE: 1, total: 1.95 },
  bound: 20,
  deleted: 20,
  provision_ms_per_claim: 479,
  delete_ms_per_claim: 648,
};

describe('nfsOperationsTable', () => {
  it('has a provision and a delete column per implementation, totals first, operations sorted, 0 where absent', () => {
    const table = nfsOperationsTable({ claims: 20, results: [ours, upstream] });
    expect(table.title).toContain('NFS operations per claim');
    expect(table.title).toContain('20 claims');
    expect(table.header).toEqual([
      'operation',
      'ours provision',
      'ours delete',
      'upstream provision',
      'upstream delete',
    ]);
    expect(table.rows).toEqual([
      ['total', '4.55', '2', '1', '1.95'],
      ['ACCESS', '0', '0', '0', '0.95'],
      ['CREATE', '1', '0', '1', '0'],
      ['LOOKUP', '3.55', '0', '0', '0'],
      ['REMOVE', '0', '2', '0', '1'],
      ['claims Bound, PVs deleted', '20', '20', '20', '20'],
      ['ms per claim (User-Mode Linux: indicative only)', '404', '2704', '479', '648'],
    ]);
  });

  it('has ours alone when upstream did not run', () => {
    expect(nfsOperationsTable({ claims: 2, results: [ours] }).header).toEqual([
      'operation',
      'ours provision',
      'ours delete',
    ]);
  });
});
