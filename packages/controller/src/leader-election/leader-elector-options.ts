/** Options and their validation for {@link LeaderElector}, with client-go's rules. */
import type { V1Lease } from '@kubernetes/client-node';
import { Gauge, type Registry } from 'prom-client';
import type { ResourceClient } from '../client/resource-client.ts';
import type { EventRecorder } from '../events/event-recorder.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { Leadership } from './lease-fence.ts';

/** Leadership notifications. */
export interface LeaderCallbacks {
  /**
   * Leadership was gained; `signal` aborts when it ends. Not awaited, but once leading ends the
   * returned promise is: on a graceful stop the Lease is kept (renewed) until it settles, and after a
   * lost round it is released only then, so the work can drain before a successor starts.
   * `leadership` is the fence of this term: its `lost` signal aborts only when the Lease is lost or
   * lapses (also during a graceful stop), and `assertLeader()` is the check to make immediately
   * before each side effect.
   */
  onStartedLeading(signal: AbortSignal, leadership: Leadership): void | Promise<void>;
  /** `run` is ending: after leading, or after being cancelled before leadership was gained. */
  onStoppedLeading(): void;
  /** The observed leader changed (including to this candidate). Not called when the Lease is released. */
  onNewLeader?(identity: string): void;
}

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  lock: {
    leases: ResourceClient<V1Lease>;
    namespace: string;
    name: string;
    /** This candidate, unique among candidates, e.g. `leaderIdentity()`. */
    identity: string;
  };
  /** How long a non-leader waits after the last observed change before taking over. Default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a renewal before giving up. Default 10 s. */
  renewDeadlineMs?: number;
  /** Pause between attempts. Default 2 s. */
  retryPeriodMs?: number;
  /**
   * When leading ends (graceful stop, or a lost round if the Lease still names this candidate), write
   * an empty holder so a peer takes over at once; always after the `onStartedLeading` work has
   * settled. Default false, as in client-go.
   */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  /** Receives the `LeaderElection` events. */
  recorder?: EventRecorder;
  clock?: Clock;
  logger?: Logger;
  /** Random numbers in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
  /** If given, the gauge `leader_election_master_status{name}` is registered here. */
  registry?: Registry;
}

/** Factor of the jitter added to the retry period, and the lower bound of renewDeadline / retryPeriod. */
export const jitterFactor = 1.2;
const masterStatusMetric = 'leader_election_master_status';

/** Throws a `RangeError` when the durations break one of client-go's rules. */
export function validate(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): void {
  for (const [name, value] of [
    ['leaseDurationMs', leaseDurationMs],
    ['renewDeadlineMs', renewDeadlineMs],
    ['retryPeriodMs', retryPeriodMs],
  ] as const) {
    if (!(value > 0)) throw new RangeError(`leader election: ${name} must be > 0, got ${value}`);
  }
  // The Lease stores whole seconds; a shorter duration would be written as 0 and expire at once.
  if (leaseDurationMs < 1000) {
    throw new RangeError(`leader election: leaseDurationMs must be >= 1000, got ${leaseDurationMs}`);
  }
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new RangeError(
      `leader election: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`,
    );
  }
  if (!(renewDeadlineMs > jitterFactor * retryPeriodMs)) {
    throw new RangeError(
      `leader election: renewDeadlineMs (${renewDeadlineMs}) must be greater than ${jitterFactor} × retryPeriodMs (${retryPeriodMs})`,
    );
  }
}

/** The `leader_election_master_status` gauge of `registry`, created once. */
export function masterStatusGauge(registry: Registry): Gauge<'name'> {
  const existing = registry.getSingleMetric(masterStatusMetric);
  if (existing instanceof Gauge) return existing as Gauge<'name'>;
  return new Gauge({
    name: masterStatusMetric,
    help: 'Whether this process leads the named lease: 1 leader, 0 standby.',
    labelNames: ['name'],
    registers: [registry],
  });
}
