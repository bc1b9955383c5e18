/**
 * How a class spreads its new volumes over its exports (class parameter `placement`): `most-free`
 * (the default), `round-robin` or `weighted`. Every policy chooses among the exports that answer and
 * can hold the request; the last two remember, per class and in memory only, where they placed last,
 * so a restart or a new leader starts each class's turn over.
 */
import { type ExportSpace, exportsThatFit, nothingFits, placeVolume } from './export-placement.ts';

/** The placement policies a class may name. */
export type PlacementPolicy = 'most-free' | 'round-robin' | 'weighted';

/** Every {@link PlacementPolicy}, the default first. */
export const placementPolicies: readonly PlacementPolicy[] = ['most-free', 'round-robin', 'weighted'];

/** Class parameter choosing the {@link PlacementPolicy}. */
export const placementParameter = 'placement';

/** Parses a `placement` value; `undefined` when it is none of {@link placementPolicies}. */
export function parsePlacementPolicy(value: string): PlacementPolicy | undefined {
  return placementPolicies.find((policy) => policy === value);
}

/** One placement to decide: for which class, by which policy, among which exports. */
export interface PlacementRequest {
  /** The StorageClass's name: each class has its own turn. */
  readonly className: string;
  readonly policy: PlacementPolicy;
  /** The free space of each of the class's exports (an error: left out). */
  readonly spaces: readonly ExportSpace[];
  /** Each export's weight for `weighted`; an export not listed weighs 1. */
  readonly weights: Readonly<Record<string, number>>;
  readonly requestBytes: bigint | undefined;
}

/**
 * Decides placements and keeps the turn of each class. Decisions are synchronous, so concurrent
 * claims of one class never take the same turn.
 */
export class PlacementTurns {
  /** `round-robin`: the export each class placed on last. */
  readonly #last = new Map<string, string>();
  /** `weighted`: each class's current weight per export (smooth weighted round-robin). */
  readonly #current = new Map<string, Map<string, number>>();

  /**
   * The export for `request`:
   * - `most-free`: the most free bytes, ties to the first name;
   * - `round-robin`: in name order, the first after the one the class used last, wrapping around;
   * - `weighted`: nginx's smooth weighted round-robin: each export that fits gains its weight, the
   *   highest (ties: first name) is chosen and loses the sum of the weights that took part. Over any
   *   run of placements with the same exports fitting, each gets its share of weight, interleaved.
   *
   * @throws Error naming each export's free space when none answers and can hold the request.
   */
  place(request: PlacementRequest): string {
    const { className, policy, spaces, requestBytes } = request;
    if (policy === 'most-free') return placeVolume(spaces, requestBytes);
    const names = exportsThatFit(spaces, requestBytes).map((space) => space.name);
    const first = names[0];
    if (first === undefined) throw nothingFits(spaces, requestBytes);
    if (policy === 'round-robin') {
      const last = this.#last.get(className);
      const chosen = (last === undefined ? undefined : names.find((name) => name > last)) ?? first;
      this.#last.set(className, chosen);
      return chosen;
    }
    return this.#weighted(className, names, request.weights);
  }

  #weighted(className: string, names: readonly string[], weights: Readonly<Record<string, number>>): string {
    const current = this.#current.get(className) ?? new Map<string, number>();
    this.#current.set(className, current);
    let total = 0;
    let chosen = names[0] as string;
    // Exports left out (down, full) neither gain nor lose: they rejoin where they were.
    for (const name of names) {
      const weight = weights[name] ?? 1;
      total += weight;
      current.set(name, (current.get(name) ?? 0) + weight);
      if ((current.get(name) as number) > (current.get(chosen) as number)) chosen = name;
    }
    current.set(chosen, (current.get(chosen) as number) - total);
    return chosen;
  }
}
