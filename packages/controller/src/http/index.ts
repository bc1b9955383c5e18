/**
 * One small HTTP server for `/metrics`, `/healthz` and `/readyz`, for a process that runs more than
 * the controller's built-in server.
 *
 * Stability: experimental. No package outside the controller imports this entry point; its names and
 * signatures may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */

export type { ProbeRegistry } from '../provision-controller.ts';
export type { Check, HealthServerOptions } from './health-server.ts';
export { HealthServer } from './health-server.ts';
