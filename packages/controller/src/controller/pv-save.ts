/**
 * How the controller saves the PV that `provision` returned: one option, `pvSave`, whose strategy is
 * the CLIs' `--pv-save-strategy`, and the Go library's option names for the same choice, kept as
 * deprecated aliases so that a port from Go keeps its settings.
 */
import type { BackoffOptions } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from '../workqueue/rate-limiters.ts';
import { Checker } from './option-checker.ts';

/**
 * `queue` (default): one create in the claim worker; a failed save is retried in the background until
 * it succeeds, the volume is never deleted and the worker is free at once. `blocking` (Go's default):
 * up to 5 creates 10 s apart in the claim worker, then `delete` on the volume and a requeue.
 */
export type PvSaveStrategy = 'queue' | 'blocking';

/** The strategies, in the order messages list them. */
export const pvSaveStrategies: readonly PvSaveStrategy[] = ['queue', 'blocking'];

/** Backoff of the blocking PV save (Go `CreateProvisionedPVBackoff`): `steps` attempts, delays in ms. */
export interface SaveBackoff extends Pick<BackoffOptions, 'initial' | 'factor' | 'jitter' | 'cap'> {
  /** Number of create attempts, at least 1. */
  readonly steps: number;
}

/** `ProvisionControllerOptions.pvSave`: the {@link PvSaveStrategy} and its settings. */
export type PvSaveOptions =
  | {
      readonly strategy: 'queue';
      /** Delays of the background retries of one PV. Default client-go's controller limiter. */
      readonly limiter?: RateLimiter;
      /** Background save workers. Default 4. */
      readonly workers?: number;
    }
  | {
      readonly strategy: 'blocking';
      /** Default 5 attempts 10 s apart (`factor` 1). */
      readonly backoff?: SaveBackoff;
    };

/**
 * The Go library's names of the PV save options, each an alias of a `pvSave` setting. They cannot be
 * combined with `pvSave`, nor the groups with one another.
 */
export interface GoPvSaveOptions {
  /** @deprecated Go `CreateProvisionedPVRetryCount`: `pvSave: { strategy: 'blocking', backoff: { steps } }`. */
  readonly createProvisionedPVRetryCount?: number;
  /** @deprecated Go `CreateProvisionedPVInterval`: `pvSave: { strategy: 'blocking', backoff: { initial } }`. */
  readonly createProvisionedPVIntervalMs?: number;
  /** @deprecated Go `CreateProvisionedPVBackoff`: use `pvSave: { strategy: 'blocking', backoff }`. */
  readonly createProvisionedPVBackoff?: SaveBackoff;
  /** @deprecated Go `CreateProvisionedPVLimiter`: use `pvSave: { strategy: 'queue', limiter }`. */
  readonly createProvisionedPVLimiter?: RateLimiter;
  /** @deprecated Use `pvSave: { strategy: 'queue', workers }`. */
  readonly saveQueueWorkers?: number;
}

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

/** Resolves `pvSave`, or else its Go aliases; records every problem in `problems`. */
export function resolvePvSave(
  options: GoPvSaveOptions & { readonly pvSave?: PvSaveOptions },
  clock: Clock,
  problems: string[],
): ResolvedPvSave {
  const { pvSave } = options;
  const groups = [
    pvSave !== undefined ? 'pvSave' : undefined,
    options.createProvisionedPVRetryCount !== undefined || options.createProvisionedPVIntervalMs !== undefined
      ? 'createProvisionedPVRetryCount/createProvisionedPVIntervalMs'
      : undefined,
    options.createProvisionedPVBackoff !== undefined ? 'createProvisionedPVBackoff' : undefined,
    options.createProvisionedPVLimiter !== undefined ? 'createProvisionedPVLimiter' : undefined,
  ].filter((group) => group !== undefined);
  if (groups.length > 1) problems.push(`${groups.join(', ')} cannot be used together`);
  if (pvSave !== undefined && options.saveQueueWorkers !== undefined) {
    problems.push('pvSave, saveQueueWorkers cannot be used together');
  }

  if (pvSave !== undefined) {
    if (typeof pvSave !== 'object' || pvSave === null || !pvSaveStrategies.includes(pvSave.strategy)) {
      problems.push(`pvSave.strategy must be one of ${pvSaveStrategies.join(', ')}`);
      return queueSave(undefined, pvSaveDefaults.workers, clock);
    }
    const check = new Checker(pvSave, problems, (key) => `pvSave.${key}`);
    if (pvSave.strategy === 'blocking') return blockingSave(pvSave.backoff, 'pvSave.backoff', problems);
    return queueSave(
      check.limiter('limiter') ? pvSave.limiter : undefined,
      check.integer('workers', pvSaveDefaults.workers, 1),
      clock,
    );
  }

  const check = new Checker(options, problems);
  const workers = check.integer('saveQueueWorkers', pvSaveDefaults.workers, 1);
  if (
    options.createProvisionedPVRetryCount !== undefined ||
    options.createProvisionedPVIntervalMs !== undefined
  ) {
    return {
      strategy: 'blocking',
      backoff: {
        steps: check.integer('createProvisionedPVRetryCount', pvSaveDefaults.backoff.steps, 1),
        initial: check.duration('createProvisionedPVIntervalMs', pvSaveDefaults.backoff.initial),
        factor: 1,
      },
    };
  }
  if (options.createProvisionedPVBackoff !== undefined && options.createProvisionedPVLimiter === undefined) {
    return blockingSave(options.createProvisionedPVBackoff, 'createProvisionedPVBackoff', problems);
  }
  const limiter = check.limiter('createProvisionedPVLimiter')
    ? options.createProvisionedPVLimiter
    : undefined;
  return queueSave(limiter, workers, clock);
}

function queueSave(limiter: RateLimiter | undefined, workers: number, clock: Clock): ResolvedPvSave {
  // client-go's default controller limiter: 5 ms doubling to 1000 s per PV, 10 qps overall.
  return { strategy: 'queue', limiter: limiter ?? defaultControllerRateLimiter(clock), workers };
}

function blockingSave(
  backoff: SaveBackoff | undefined,
  name: string,
  problems: string[],
): ResolvedBlockingSave {
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
    problems.push(`${name} needs integer steps >= 1, initial >= 0, factor >= 1, jitter >= 0`);
    return { strategy: 'blocking', backoff: pvSaveDefaults.backoff };
  }
  return { strategy: 'blocking', backoff: { factor: 1, ...backoff } };
}
