/**
 * The controller's {@link LeaderElector}: its Lease, timings and own rate limit from the controller's
 * options, with its `leading` and `stoppedLeading` events passed on to the controller's listeners.
 */

import type { Registry } from 'prom-client';
import { defaultRateLimit } from '../client/request-limiter.ts';
import { resources } from '../client/resource-client.ts';
import { ConfigurationError } from '../configuration-error.ts';
import type { EventRecorder } from '../events/event-recorder.ts';
import { LeaderElector } from '../leader-election/leader-elector.ts';
import type { LeaderCallbacks } from '../leader-election/leader-elector-options.ts';
import type { ProvisionControllerEvents } from '../lifecycle-events.ts';
import type { Clock } from '../util/clock.ts';
import type { LifecycleSink } from '../util/lifecycle-emitter.ts';
import type { Logger } from '../util/logger.ts';
import { withOwnRateLimit } from './queue-limiters.ts';
import type { ResolvedOptions } from './resolve-options.ts';

/** What the elector needs from the controller. */
export interface ControllerElectorConfig {
  readonly options: ResolvedOptions;
  /** The Lease name in `options.leaderElection.namespace`. */
  readonly name: string;
  readonly identity: string;
  readonly callbacks: LeaderCallbacks;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly events: LifecycleSink<ProvisionControllerEvents>;
}

/** @throws ConfigurationError when the leader election timings break client-go's rules. */
export function createControllerElector(config: ControllerElectorConfig): LeaderElector {
  const { options, events } = config;
  const election = options.leaderElection;
  let elector: LeaderElector;
  try {
    elector = new LeaderElector({
      lock: {
        // Renewals must never wait behind the controller's own PV traffic.
        leases: withOwnRateLimit(options.api, defaultRateLimit).resource(resources.leases),
        namespace: election.namespace,
        name: config.name,
        identity: config.identity,
      },
      leaseDurationMs: election.leaseDurationMs,
      renewDeadlineMs: election.renewDeadlineMs,
      retryPeriodMs: election.retryPeriodMs,
      releaseOnCancel: election.releaseOnShutdown,
      callbacks: config.callbacks,
      recorder: config.recorder,
      clock: config.clock,
      logger: config.logger,
      registry: config.registry,
    });
  } catch (err) {
    throw new ConfigurationError([err instanceof Error ? err.message : String(err)]);
  }
  elector.on('leading', (event) => events.emit('leading', () => event));
  elector.on('stoppedLeading', (event) => events.emit('stoppedLeading', () => event));
  return elector;
}
