import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chooseRoot, type RootRoom, rootsOfClass } from '../src/root-placement.ts';

const name = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/u);
const rooms = fc.uniqueArray(fc.record({ name, roomBytes: fc.integer({ min: 0, max: 1_000 }) }), {
  selector: (room) => room.name,
  maxLength: 6,
});
const request = fc.integer({ min: 0, max: 1_000 });

describe('root placement', () => {
  it('never picks a root without room, and picks one whenever a root has room', () => {
    fc.assert(
      fc.property(rooms, request, (all, bytes) => {
        const chosen = chooseRoot(all, bytes);
        const fitting = all.filter((room) => room.roomBytes >= bytes);
        if (chosen === undefined) expect(fitting).toEqual([]);
        else expect(chosen.roomBytes).toBeGreaterThanOrEqual(bytes);
      }),
    );
  });

  it('picks the most room, ties to the first name, whatever the order of the roots', () => {
    fc.assert(
      fc.property(rooms, request, fc.infiniteStream(fc.nat()), (all, bytes, draws) => {
        const chosen = chooseRoot(all, bytes);
        const shuffled = [...all];
        const next = draws[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i -= 1) {
          const j = (next.next().value as number) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j] as RootRoom, shuffled[i] as RootRoom];
        }
        expect(chooseRoot(shuffled, bytes)).toEqual(chosen);
        if (chosen === undefined) return;
        for (const room of all) {
          expect(room.roomBytes).toBeLessThanOrEqual(chosen.roomBytes);
          if (room.roomBytes === chosen.roomBytes) expect(room.name >= chosen.name).toBe(true);
        }
      }),
    );
  });

  it('places only on the roots the class names, by name or label', () => {
    const label = fc.constantFrom('fast', 'bulk', 'local');
    const labelled = rooms.chain((all) =>
      fc.tuple(
        ...all.map((room) => fc.uniqueArray(label, { maxLength: 2 }).map((labels) => ({ ...room, labels }))),
      ),
    );
    fc.assert(
      fc.property(labelled, request, fc.infiniteStream(fc.boolean()), (all, bytes, picks) => {
        const next = picks[Symbol.iterator]();
        const candidates = [...new Set(all.flatMap((room) => [room.name, ...room.labels]))];
        const named = candidates.filter(() => next.next().value === true);
        const allowed = rootsOfClass(all, named);
        const chosen = chooseRoot(allowed, bytes);
        for (const room of all) {
          const wanted = named.includes(room.name) || room.labels.some((l) => named.includes(l));
          expect(allowed.includes(room)).toBe(wanted);
        }
        if (chosen !== undefined) expect(allowed).toContain(chosen);
      }),
    );
  });

  it('refuses a class naming a root the node does not have, naming both', () => {
    const roots = [
      { name: 'bulk', roomBytes: 1 },
      { name: 'fast', roomBytes: 2 },
    ];
    expect(() => rootsOfClass(roots, ['fast', 'ssd'])).toThrow(
      'parameter "roots" names "ssd", not a root or label of this node: its roots are bulk, fast',
    );
    expect(rootsOfClass(roots, undefined)).toBe(roots);
  });

  it('lets a class name roots by label, and lists the labels when it names none there', () => {
    const roots = [
      { name: 'nvme0', labels: ['fast'], roomBytes: 1 },
      { name: 'nvme1', labels: ['fast', 'local'], roomBytes: 2 },
      { name: 'hdd0', roomBytes: 3 },
    ];
    expect(rootsOfClass(roots, ['fast']).map((root) => root.name)).toEqual(['nvme0', 'nvme1']);
    expect(rootsOfClass(roots, ['local', 'hdd0']).map((root) => root.name)).toEqual(['nvme1', 'hdd0']);
    expect(() => rootsOfClass(roots, ['bulk'])).toThrow(
      'parameter "roots" names "bulk", not a root or label of this node: its roots are nvme0 (labels fast), nvme1 (labels fast, local), hdd0',
    );
  });
});
