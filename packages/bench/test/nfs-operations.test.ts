import { describe, expect, it } from 'vitest';
import { operationsPerClaim } from '../src/nfs-operations.ts';

function counters(operations: Record<string, number>): Record<string, { operations: number }> {
  return Object.fromEntries(Object.entries(operations).map(([name, count]) => [name, { operations: count }]));
}

describe('operationsPerClaim', () => {
  it('divides what each operation added by the claims, leaves unchanged ones out and totals the rest', () => {
    const before = counters({ CREATE: 10, LOOKUP: 100, READ: 7 });
    const after = counters({ CREATE: 14, LOOKUP: 107, READ: 7, ACCESS: 3 });
    expect(operationsPerClaim(before, after, 4)).toEqual({
      CREATE: 1,
      LOOKUP: 1.75,
      ACCESS: 0.75,
      total: 3.5,
    });
  });

  it('counts an operation first seen after the earlier reading from zero, to two decimals', () => {
    expect(operationsPerClaim({}, counters({ GETATTR: 2 }), 3)).toEqual({ GETATTR: 0.67, total: 0.67 });
  });
});
