/**
 * What every side-effecting step of the controller checks immediately before it acts:
 * with leader election, that this replica's view of its Lease is still fresh; always, whether a
 * failure is the controller stopping rather than the operation failing.
 */
import type { LeadershipLapsedError } from '../leader-election/lease-fence.ts';

/** The check before side effects, and how to tell an abandoned step from a failed one. */
export interface WorkFence {
  /**
   * Throws a {@link LeadershipLapsedError} when this replica may not act now (the Lease lapsed or was
   * lost, or it is not leading). A no-op without leader election.
   */
  assertLeader(): void;
  /**
   * Whether work was cut short by the controller rather than by a fault of the step: a hard stop, or
   * leadership lost or lapsed. Such a step is abandoned silently: no event, no failure count.
   */
  abandoned(): boolean;
}

/** A fence that never closes and never abandons: for code and tests without a controller around it. */
export const openFence: WorkFence = {
  assertLeader: () => {},
  abandoned: () => false,
};
