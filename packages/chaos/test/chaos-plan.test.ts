import { describe, expect, it } from 'vitest';
import { chaosPlan, chaosPlanFromEnv } from '../src/chaos-plan.ts';

describe('chaos plan', () => {
  it('has at least 5 creation waves, 3 deletion waves, a pause longer than the lease, 20 nested pairs, 10 resizes, 6 expiring archives, 6 take-backs, 4 clones, 4 hostile clones and 2 snapshots', () => {
    expect(chaosPlan(150, 7)).toEqual({
      seed: 7,
      claims: 150,
      createWaves: 5,
      deleteWaves: 3,
      pauseMs: 20_000,
      maxKillDelayMs: 3000,
      nestedPairs: 20,
      resizeClaims: 10,
      sweepClaims: 6,
      sweepFiles: 500,
      takeBackClaims: 6,
      cloneClaims: 4,
      cloneFiles: 3000,
      hostileClones: 4,
      snapshots: 2,
      snapshotFiles: 3000,
      hostileTrees: { bigFileBytes: 8 << 20, maxWideFiles: 20_000, maxDepth: 300 },
    });
    expect(chaosPlan(2000, 7)).toMatchObject({
      createWaves: 10,
      deleteWaves: 5,
      nestedPairs: 200,
      resizeClaims: 134,
      sweepClaims: 80,
      takeBackClaims: 80,
      cloneClaims: 50,
      hostileClones: 50,
      snapshots: 27,
    });
  });

  it('reads CHAOS_CLAIMS and CHAOS_SEED, and refuses nonsense', () => {
    expect(chaosPlanFromEnv({ CHAOS_CLAIMS: '2000', CHAOS_SEED: '42' })).toMatchObject({
      claims: 2000,
      seed: 42,
    });
    expect(chaosPlanFromEnv({}).claims).toBe(150);
    expect(() => chaosPlanFromEnv({ CHAOS_CLAIMS: 'many' })).toThrow(
      /CHAOS_CLAIMS must be a non-negative integer/u,
    );
    expect(() => chaosPlanFromEnv({ CHAOS_CLAIMS: '3' })).toThrow(/at least 10/u);
  });
});
