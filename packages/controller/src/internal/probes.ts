/** The controller's liveness and readiness checks (see `ProvisionController.registerChecks`). */
import type { HealthServer } from '../http/health-server.ts';
import type { LeaderElector } from '../leader-election/leader-elector.ts';
import type { ResolvedOptions } from './resolve-options.ts';

/** Where `ProvisionController.registerChecks` adds its probes; a `HealthServer` is one. */
export type ProbeRegistry = Pick<HealthServer, 'addHealthCheck' | 'addReadinessCheck'>;

/** How long past the lease a leader may go without renewing before it is unhealthy (client-go's adaptor in kube-controller-manager). */
const maxTolerableExpiredLeaseMs = 20_000;

/** What the checks read. */
export interface ControllerProbeSources {
  readonly elector: LeaderElector | undefined;
  readonly options: Pick<
    ResolvedOptions['leaderElection'],
    'renewDeadlineMs' | 'leaseDurationMs' | 'retryPeriodMs'
  >;
  readonly phase: () => 'new' | 'running' | 'stopped';
  readonly informers: Readonly<Record<string, { hasSynced(): boolean }>>;
}

/** Adds health `leader-election` (with an elector) and readiness `provision-controller` to `server`. */
export function registerControllerChecks(server: ProbeRegistry, sources: ControllerProbeSources): void {
  const { elector } = sources;
  if (elector !== undefined) {
    const { renewDeadlineMs, leaseDurationMs, retryPeriodMs } = sources.options;
    const tolerance = Math.max(maxTolerableExpiredLeaseMs, retryPeriodMs + renewDeadlineMs - leaseDurationMs);
    server.addHealthCheck('leader-election', () => {
      const stuck = elector.healthCheck(tolerance);
      if (stuck !== null) throw stuck;
    });
  }
  server.addReadinessCheck('provision-controller', () => checkReady(sources));
}

function checkReady({ elector, phase, informers }: ControllerProbeSources): void {
  const current = phase();
  if (current !== 'running') throw new Error(current === 'new' ? 'not started' : 'stopped');
  const denied = elector?.accessCheck();
  if (denied) throw denied;
  if (elector !== undefined && !elector.isLeader()) return;
  const unsynced = Object.entries(informers)
    .filter(([, informer]) => !informer.hasSynced())
    .map(([name]) => name);
  if (unsynced.length > 0) throw new Error(`caches not synced: ${unsynced.join(', ')}`);
}
