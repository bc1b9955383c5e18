/** Resolution of the `pvSave` option: defaults and validation of the strategy and its settings. */
import type { PvSaveOptions, PvSaveStrategy, SaveBackoff } from '../pv-save-options.ts';
import type { Clock } from '../util/clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from '../workqueue/rate-limiters.ts';
import { Checker } from './option-checker.ts';

/** The strategies, in the order messages list them. */
export const pvSaveStrategies: readonly PvSaveStrategy[] = ['queue', 'blocking'];

/** `pvSave` resolved: every setting present. */
export type ResolvedPvSave = Required<PvSaveOptions & { readonly strategy: 'queue' }> | ResolvedBlockingSave;
type ResolvedBlockingSave = Required<PvSaveOptions & { readonly strategy: 'blocking' }>;

/** Defaults of the two strategies. */
export const pvSaveDefaults: {
  readonly strategy: PvSaveStrategy;
  readonly workers: number;
  readonly backoff: SaveBackoff;
} = Object.freeze({
  strategy: 'queue',
  workers: 4,
  backoff: Object.freeze({ steps: 5, initial: 10_000, factor: 1 }),
});

/** Resolves `pvSave`; records every problem in `problems`. */
export function resolvePvSave(
  options: { readonly pvSave?: PvSaveOptions },
  clock: Clock,
  problems: string[],
): ResolvedPvSave {
  const { pvSave } = options;
  if (pvSave === undefined) return queueSave(undefined, pvSaveDefaults.workers, clock);
  if (typeof pvSave !== 'object' || pvSave === null || !pvSaveStrategies.includes(pvSave.strategy)) {
    problems.push(`pvSave.strategy must be one of ${pvSaveStrategies.join(', ')}`);
    return queueSave(undefined, pvSaveDefaults.workers, clock);
  }
  if (pvSave.strategy === 'blocking') return blockingSave(pvSave.backoff, problems);
  const check = new Checker(pvSave, problems, (key) => `pvSave.${key}`);
  return queueSave(
    check.limiter('limiter') ? pvSave.limiter : undefined,
    check.integer('workers', pvSaveDefaults.workers, 1),
    clock,
  );
}

function queueSave(limiter: RateLimiter | undefined, workers: number, clock: Clock): ResolvedPvSave {
  // client-go's default controller limiter: 5 ms doubling to 1000 s per PV, 10 qps overall.
  return { strategy: 'queue', limiter: limiter ?? defaultControllerRateLimiter(clock), workers };
}

function blockingSave(backoff: SaveBackoff | undefined, problems: string[]): ResolvedBlockingSave {
  if (backoff === undefined) return { strategy: 'blocking', backoff: pvSaveDefaults.backoff };
  const valid =
    typeof backoff === 'object' &&
    backoff !== null &&
    Number.isInteger(backoff.steps) &&
    backoff.steps >= 1 &&
    backoff.initial >= 0 &&
    (backoff.factor ?? 1) >= 1 &&
    (backoff.jitter ?? 0) >= 0 &&
    (backoff.cap ?? 0) >= 0;
  if (!valid) {
    problems.push(`pvSave.backoff needs integer steps >= 1, initial >= 0, factor >= 1, jitter >= 0`);
    return { strategy: 'blocking', backoff: pvSaveDefaults.backoff };
  }
  return { strategy: 'blocking', backoff: { factor: 1, ...backoff } };
}
