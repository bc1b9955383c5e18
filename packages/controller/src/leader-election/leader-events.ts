/** The typed lifecycle events of `LeaderElector`: when leading starts and ends, and why it ended. */

/**
 * Why leading ended: `stopRequested`, the signal given to `run()` was aborted (a graceful stop);
 * `leaseLost`, a renewal round failed or the fence lapsed (the process stalled, or the Lease was not
 * renewed within the renew deadline), so another candidate may lead by now.
 */
export type StoppedLeadingReason = 'stopRequested' | 'leaseLost';

/** Payload of `leading`: this candidate acquired the Lease and starts its work. */
export interface LeadingEvent {
  /** The Lease, as `namespace/name`. */
  readonly lease: string;
  /** This candidate's holder identity. */
  readonly identity: string;
}

/**
 * Payload of `stoppedLeading`: leading ended and its work has settled (after the Lease was released,
 * when `releaseOnCancel` is set). Never emitted by a candidate that did not lead.
 */
export interface StoppedLeadingEvent {
  /** The Lease, as `namespace/name`. */
  readonly lease: string;
  /** This candidate's holder identity. */
  readonly identity: string;
  /** Whether a stop was requested or the Lease was lost. */
  readonly reason: StoppedLeadingReason;
  /** What ended leadership when `reason` is `leaseLost`; `undefined` for a requested stop. */
  readonly error: Error | undefined;
  /** How long this candidate led, in milliseconds of the elector's clock. */
  readonly ledMs: number;
}

/** Events of a `LeaderElector`, by name, with their payload. */
export interface LeaderElectorEvents {
  /** The Lease was acquired; emitted before `onStartedLeading` is called. */
  leading: LeadingEvent;
  /** Leading ended; emitted after the term's work settled, before `onStoppedLeading` is called. */
  stoppedLeading: StoppedLeadingEvent;
}
