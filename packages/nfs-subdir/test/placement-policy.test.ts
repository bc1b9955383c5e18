import { describe, expect, it } from 'vitest';
import type { ExportSpace } from '../src/export-placement.ts';
import { type PlacementPolicy, PlacementTurns, parsePlacementPolicy } from '../src/placement-policy.ts';

const gi = 1024 ** 3;

/** Exports a, b and c with `free` bytes each; a name missing from `down` answers, one in it does not. */
function spaces(free: Record<string, number>, down: readonly string[] = []): ExportSpace[] {
  return Object.entries(free).map(([name, freeBytes]) =>
    down.includes(name)
      ? { name, error: 'statfs gave no answer within 10000 ms' }
      : { name, freeBytes, capacityBytes: 2 * freeBytes },
  );
}

const equal = { a: 5 * gi, b: 5 * gi, c: 5 * gi };

/** The exports `turns` chooses for class `className`, one placement per entry of `rounds`. */
function decide(
  turns: PlacementTurns,
  policy: PlacementPolicy,
  rounds: readonly ExportSpace[][],
  options: { className?: string; weights?: Record<string, number>; requestBytes?: bigint } = {},
): string[] {
  return rounds.map((round) =>
    turns.place({
      className: options.className ?? 'standard',
      policy,
      spaces: round,
      weights: options.weights ?? {},
      requestBytes: options.requestBytes ?? BigInt(gi),
    }),
  );
}

describe('placement policies', () => {
  it('reads the three policy names, nothing else', () => {
    expect(['most-free', 'round-robin', 'weighted', 'Weighted', ''].map(parsePlacementPolicy)).toEqual([
      'most-free',
      'round-robin',
      'weighted',
      undefined,
      undefined,
    ]);
  });

  it('most-free: the most free bytes each time, ties to the first name, no turn kept', () => {
    const turns = new PlacementTurns();
    const rounds = [equal, { ...equal, c: 9 * gi }, equal, { a: 1 * gi, b: 2 * gi, c: 2 * gi }].map((free) =>
      spaces(free),
    );
    expect(decide(turns, 'most-free', rounds)).toEqual(['a', 'c', 'a', 'b']);
  });

  it('round-robin: in name order after the export used last, skipping down and full exports', () => {
    const turns = new PlacementTurns();
    const rounds = [
      spaces(equal),
      spaces(equal),
      spaces(equal, ['c']), // c down: wraps to a
      spaces(equal), // after a: b
      spaces({ ...equal, c: 0.5 * gi }), // c cannot hold 1 GiB: wraps to a
      spaces(equal, ['b']), // b down: c
      spaces(equal), // a again
    ];
    expect(decide(turns, 'round-robin', rounds)).toEqual(['a', 'b', 'a', 'b', 'a', 'c', 'a']);
  });

  it('round-robin: each class has its own turn, and a new process starts over', () => {
    const turns = new PlacementTurns();
    const round = [spaces(equal)];
    expect(decide(turns, 'round-robin', round, { className: 'one' })).toEqual(['a']);
    expect(decide(turns, 'round-robin', round, { className: 'one' })).toEqual(['b']);
    expect(decide(turns, 'round-robin', round, { className: 'two' })).toEqual(['a']);
    expect(decide(new PlacementTurns(), 'round-robin', round, { className: 'one' })).toEqual(['a']);
  });

  it('round-robin: continues after the export used last even when that export has left the class', () => {
    const turns = new PlacementTurns();
    expect(decide(turns, 'round-robin', [spaces(equal), spaces(equal)])).toEqual(['a', 'b']);
    // The class now names a and c only: the next after b in name order is c.
    expect(decide(turns, 'round-robin', [spaces({ a: gi, c: gi }, [])], { requestBytes: 0n })).toEqual(['c']);
  });

  it('weighted: smooth weighted round-robin, each export its share interleaved', () => {
    const turns = new PlacementTurns();
    const rounds = Array.from({ length: 7 }, () => spaces(equal));
    const chosen = decide(turns, 'weighted', rounds, { weights: { a: 5, b: 1, c: 1 } });
    // nginx's sequence for 5:1:1.
    expect(chosen).toEqual(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
  });

  it('weighted: an export without a weight weighs 1; equal weights are round-robin', () => {
    const rounds = Array.from({ length: 6 }, () => spaces(equal));
    expect(decide(new PlacementTurns(), 'weighted', rounds)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(decide(new PlacementTurns(), 'weighted', rounds, { weights: { b: 2 } })).toEqual([
      'b',
      'a',
      'c',
      'b',
      'b',
      'a',
    ]);
  });

  it('weighted: an export that is down takes no share, the others split its turns by weight', () => {
    const turns = new PlacementTurns();
    const weights = { a: 3, b: 1, c: 2 };
    const rounds = [
      ...Array.from({ length: 4 }, () => spaces(equal, ['c'])),
      ...Array.from({ length: 6 }, () => spaces(equal)),
    ];
    const chosen = decide(turns, 'weighted', rounds, { weights });
    // While c is down, a and b share 3:1.
    expect(chosen.slice(0, 4).sort()).toEqual(['a', 'a', 'a', 'b']);
    expect(chosen.slice(0, 4)).toEqual(['a', 'a', 'b', 'a']);
    // Back, it takes its 2 of every 6 again.
    expect(chosen.slice(4).filter((name) => name === 'c')).toHaveLength(2);
    expect(chosen.slice(4).filter((name) => name === 'a')).toHaveLength(3);
  });

  it.each(['most-free', 'round-robin', 'weighted'] as const)(
    '%s: a claim no export can hold fails naming each export, as most-free always did',
    (policy) => {
      const round = spaces({ a: 1 * gi, b: 2 * gi, c: 3 * gi }, ['c']);
      expect(() => decide(new PlacementTurns(), policy, [round], { requestBytes: BigInt(4 * gi) })).toThrow(
        `no export of this class can hold the requested ${4 * gi} bytes: a has ${gi} bytes free, b has ${2 * gi} bytes free, c's free space is unknown (statfs gave no answer within 10000 ms); no directory was created`,
      );
    },
  );

  it('a failed placement does not move the turn', () => {
    const turns = new PlacementTurns();
    expect(decide(turns, 'round-robin', [spaces(equal)])).toEqual(['a']);
    expect(() => decide(turns, 'round-robin', [spaces(equal, ['a', 'b', 'c'])])).toThrow('no export');
    expect(decide(turns, 'round-robin', [spaces(equal)])).toEqual(['b']);
  });
});
