/**
 * The chaos suite's harness: provisioner replicas under SIGKILL, SIGSTOP and control-plane faults,
 * judged by the orphan audit, Lease tenures and each replica's log.
 *
 * @packageDocumentation
 */
export { type ChaosPlan, chaosPlan, chaosPlanFromEnv, chaosTimeoutMs, ciClaims } from './chaos-plan.ts';
export { formatChaosReport } from './chaos-report.ts';
export { ChaosScenario, type ScenarioPlan, type ScenarioResult } from './chaos-scenario.ts';
export {
  type ChaosTarget,
  type DataFate,
  startHostPathTarget,
  startNfsSubdirTarget,
  type TargetContext,
} from './chaos-targets.ts';
export { ClaimFleet, type FleetClaim, forEachLimited } from './claim-fleet.ts';
export { type ClusterFault, runClusterFaults } from './cluster-faults.ts';
export { currentLeader, killLeader, type LeaderFault, pauseLeader } from './leader-faults.ts';
export { type LeaseTracker, trackLease } from './lease-tracker.ts';
export { type NestedRendersOptions, type NestedRendersResult, runNestedRenders } from './nested-renders.ts';
export {
  type Incarnation,
  type ReplicaSet,
  type ReplicaSetOptions,
  startReplicaSet,
  workMessages,
} from './replica-set.ts';
export { freshSeed, type SeededRandom, seededRandom } from './seeded-random.ts';
