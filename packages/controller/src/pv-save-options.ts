/** `ProvisionControllerOptions.pvSave`: how the controller saves the PV that `provision` returned. */
import type { BackoffOptions } from './util/backoff.ts';
import type { RateLimiter } from './workqueue/rate-limiters.ts';

/**
 * `queue` (default): one create in the claim worker; a failed save is retried in the background until
 * it succeeds, the volume is never deleted and the worker is free at once. `blocking` (Go's default):
 * up to 5 creates 10 s apart in the claim worker, then `delete` on the volume and a requeue.
 */
export type PvSaveStrategy = 'queue' | 'blocking';

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
