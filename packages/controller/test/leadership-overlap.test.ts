import { describe, expect, it } from 'vitest';
import { findOverlaps, overlapWindows } from '../src/testing/leadership-overlap.ts';

const tenures = [
  { holder: 'b', acquiredAtMs: 2000 },
  { holder: 'a', acquiredAtMs: 1000 },
];

describe('findOverlaps', () => {
  it('accepts work inside the replica’s own tenure', () => {
    const lines = [
      { identity: 'a', atMs: 1000, msg: 'x' },
      { identity: 'a', atMs: 1999, msg: 'x' },
      { identity: 'b', atMs: 2000, msg: 'x' },
      { identity: 'b', atMs: 9000, msg: 'x' },
    ];
    expect(findOverlaps(tenures, lines)).toEqual([]);
  });

  it('flags work after a successor acquired, before any tenure, and by a replica that never led', () => {
    const lines = [
      { identity: 'a', atMs: 2001, msg: 'late' },
      { identity: 'a', atMs: 999, msg: 'early' },
      { identity: undefined, atMs: 1500, msg: 'anonymous' },
    ];
    expect(findOverlaps(tenures, lines)).toEqual([
      { identity: 'a', atMs: 2001, msg: 'late', holder: 'b' },
      { identity: 'a', atMs: 999, msg: 'early', holder: undefined },
      { identity: undefined, atMs: 1500, msg: 'anonymous', holder: 'a' },
    ]);
  });
});

describe('overlapWindows', () => {
  it('summarises overlapping lines per replica', () => {
    const windows = overlapWindows([
      { identity: 'a', atMs: 3000, msg: 'x', holder: 'b' },
      { identity: 'a', atMs: 2500, msg: 'x', holder: 'b' },
      { identity: undefined, atMs: 10, msg: 'x', holder: undefined },
    ]);
    expect(windows).toEqual([
      { identity: 'a', lines: 2, fromMs: 2500, toMs: 3000 },
      { identity: '(never led)', lines: 1, fromMs: 10, toMs: 10 },
    ]);
  });
});
