/**
 * The types of `ProvisionControllerOptions`' fields, and the clock and backoff it can be given.
 *
 * Stability: experimental. No package outside the controller imports this entry point (the options
 * themselves are stable through `ProvisionControllerOptions`); its names and signatures may change
 * in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */

export type { LeaderElectionOptions, LeaseLossPolicy, MetricsServerOptions } from './process-options.ts';
export type { RescheduleMode } from './provision-controller-options.ts';
export type { PvSaveOptions, PvSaveStrategy, SaveBackoff } from './pv-save-options.ts';
export type { BackoffOptions } from './util/backoff.ts';
export { Backoff } from './util/backoff.ts';
export type { Clock } from './util/clock.ts';
export { realClock } from './util/clock.ts';
