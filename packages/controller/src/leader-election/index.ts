/**
 * Lease leader election with client-go's rules, plus a Lease watch for instant hand-over, and the
 * identity and Lease-name helpers the controller uses.
 *
 * @packageDocumentation
 */
export type { LeaderCallbacks, LeaderElectionOutcome, LeaderElectorOptions } from './leader-elector.ts';
export { LeaderElector } from './leader-elector.ts';
export { leaderIdentity } from './leader-identity.ts';
export { leaseNameFor } from './lease-name.ts';
