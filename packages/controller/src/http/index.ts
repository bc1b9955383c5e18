/**
 * One small HTTP server for `/metrics`, `/healthz` and `/readyz`, for a process that runs more than
 * the controller's built-in server.
 *
 * @packageDocumentation
 */

export type { ProbeRegistry } from '../provision-controller.ts';
export type { Check, HealthServerOptions } from './health-server.ts';
export { HealthServer } from './health-server.ts';
