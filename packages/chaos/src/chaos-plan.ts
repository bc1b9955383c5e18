/**
 * The size of a chaos run. `npm test` runs the CI size (150 claims per target, about 8 minutes);
 * `npm run chaos -- --claims 2000` the release size. The run is replayed from its seed.
 */
import type { ScenarioPlan } from './chaos-scenario.ts';
import { freshSeed } from './seeded-random.ts';
import type { TenantTreeLimits } from './tenant-mutations.ts';

/** A plan and its seed. */
export interface ChaosPlan extends ScenarioPlan {
  readonly seed: number;
  /** Pairs of claims rendering `P` and `P/…` per target in the nested-render phase. */
  readonly nestedPairs: number;
  /** Claims resized at once per target in the resize phase. */
  readonly resizeClaims: number;
  /** Claims whose archives expire in the archive-expiry phase (nfs-subdir), with half as many kept. */
  readonly sweepClaims: number;
  /** Files in each of their volumes, so that a sweep takes long enough to be cut short. */
  readonly sweepFiles: number;
  /** Claims taking archived or retained data back at once in the take-back phase, per target. */
  readonly takeBackClaims: number;
  /** Clone claims in the clone phase per target, two per source. */
  readonly cloneClaims: number;
  /** Files in each source, so that a copy takes long enough to be cut short. */
  readonly cloneFiles: number;
  /** Clones of the hostile tenant's changing sources per target, two per source. */
  readonly hostileClones: number;
  /** Snapshots per target that takes them, one per source, each restored once. */
  readonly snapshots: number;
  /** Files in each of their sources, so that a snapshot copy and a restore take long enough to be cut short. */
  readonly snapshotFiles: number;
  /** How large the hostile tenant's trees start and how far they grow. */
  readonly hostileTrees: TenantTreeLimits;
}

/** Claims per target in CI. */
export const ciClaims = 150;

/**
 * The plan for `claims` claims per target: at least 5 creation waves and 3 deletion waves, more for
 * larger runs; a SIGKILL in each wave but the last of each phase, which has a 20 s SIGSTOP (the lease
 * is 15 s); one nested-render pair per ten claims, at least 20; one resized claim per fifteen,
 * at least 10; one expiring archive and one take-back per twenty-five claims, at least 6 each; and
 * one clone per forty claims, at least 4, of sources of 3000 files; as many clones of a hostile
 * tenant's changing sources; one snapshot (restored once) per seventy-five claims, at least 2, of
 * sources of 3000 files.
 */
export function chaosPlan(claims: number, seed: number): ChaosPlan {
  return {
    seed,
    claims,
    createWaves: Math.max(5, Math.ceil(claims / 200)),
    deleteWaves: Math.max(3, Math.ceil(claims / 400)),
    pauseMs: 20_000,
    maxKillDelayMs: 3000,
    nestedPairs: Math.max(20, Math.ceil(claims / 10)),
    resizeClaims: Math.max(10, Math.ceil(claims / 15)),
    sweepClaims: Math.max(6, Math.ceil(claims / 25)),
    sweepFiles: 500,
    takeBackClaims: Math.max(6, Math.ceil(claims / 25)),
    cloneClaims: Math.max(4, Math.ceil(claims / 40)),
    cloneFiles: 3000,
    hostileClones: Math.max(4, Math.ceil(claims / 40)),
    snapshots: Math.max(2, Math.ceil(claims / 75)),
    snapshotFiles: 3000,
    // Wide and deep enough that a walk keeping whole levels or rescanning them would show.
    hostileTrees: { bigFileBytes: 8 << 20, maxWideFiles: 20_000, maxDepth: 300 },
  };
}

/** The plan from `CHAOS_CLAIMS` and `CHAOS_SEED`, as set by `npm run chaos`. */
export function chaosPlanFromEnv(env: Readonly<Record<string, string | undefined>>): ChaosPlan {
  const parse = (name: string, fallback: number): number => {
    const value = env[name];
    if (value === undefined || value === '') return fallback;
    if (!/^\d+$/u.test(value))
      throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
    return Number(value);
  };
  const claims = parse('CHAOS_CLAIMS', ciClaims);
  if (claims < 10) throw new Error(`CHAOS_CLAIMS must be at least 10, got ${claims}`);
  return chaosPlan(claims, parse('CHAOS_SEED', freshSeed()));
}

/** How long a run of `plan` may take, for the test timeout. */
export function chaosTimeoutMs(plan: ScenarioPlan): number {
  return 20 * 60_000 + plan.claims * 1000;
}
