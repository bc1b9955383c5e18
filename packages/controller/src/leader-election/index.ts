/**
 * Lease leader election with client-go's rules, plus a Lease watch for instant hand-over, the fence
 * that stops a leader's side effects once its view of the Lease is stale, and the identity and
 * Lease-name helpers the controller uses.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

export type { LifecycleEventMap } from '../util/lifecycle-emitter.ts';
export type { LeaderElectionOutcome } from './leader-elector.ts';
export { LeaderElector } from './leader-elector.ts';
export type { LeaderCallbacks, LeaderElectorOptions } from './leader-elector-options.ts';
export type {
  LeaderElectorEvents,
  LeadingEvent,
  StoppedLeadingEvent,
  StoppedLeadingReason,
} from './leader-events.ts';
export { leaderIdentity } from './leader-identity.ts';
export type { Leadership } from './lease-fence.ts';
export { isLeadershipLapsedError, LeadershipLapsedError } from './lease-fence.ts';
export { leaseNameFor } from './lease-name.ts';
