/**
 * The types of `ProvisionControllerOptions`' fields, and the clock and backoff it can be given.
 *
 * @packageDocumentation
 */

export type { BackoffOptions } from '../util/backoff.ts';
export { Backoff } from '../util/backoff.ts';
export type { Clock } from '../util/clock.ts';
export { realClock } from '../util/clock.ts';
export type { LeaseLossPolicy, RescheduleMode, SaveBackoff } from './options.ts';
