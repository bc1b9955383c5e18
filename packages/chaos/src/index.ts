/**
 * The chaos suite's harness: provisioner replicas under SIGKILL, SIGSTOP and control-plane faults,
 * judged by the orphan audit, Lease tenures and each replica's log.
 *
 * @packageDocumentation
 */
export {
  type ArchiveExpiryOptions,
  type ArchiveExpiryResult,
  runArchiveExpiryUnderKill,
} from './archive-expiry-under-kill.ts';
export { type ChaosPlan, chaosPlan, chaosPlanFromEnv, chaosTimeoutMs, ciClaims } from './chaos-plan.ts';
export { formatChaosReport, type LifecycleResults } from './chaos-report.ts';
export { ChaosScenario, type ScenarioPlan, type ScenarioResult } from './chaos-scenario.ts';
export {
  type ChaosTarget,
  type DataFate,
  type KeepingClass,
  startHostPathTarget,
  startNfsSubdirTarget,
  type TakeBackSupport,
  type TargetContext,
} from './chaos-targets.ts';
export { ClaimFleet, type FleetClaim, forEachLimited, newClaim } from './claim-fleet.ts';
export { type CloneOptions, type CloneResult, runCloneUnderKill } from './clone-under-kill.ts';
export { type ClusterFault, runClusterFaults } from './cluster-faults.ts';
export {
  DirectorySnapshots,
  installSnapshotCrd,
  type SnapshotObject,
  snapshotApiGroup,
} from './directory-snapshots.ts';
export {
  type AimedFault,
  currentLeader,
  killLeader,
  killLeaderDuring,
  killLeaderWhen,
  type LeaderFault,
  pauseLeader,
} from './leader-faults.ts';
export { type LeaseTracker, trackLease } from './lease-tracker.ts';
export { type NestedRendersOptions, type NestedRendersResult, runNestedRenders } from './nested-renders.ts';
export type { PhaseContext } from './phase-context.ts';
export {
  type Incarnation,
  type ReplicaSet,
  type ReplicaSetOptions,
  startReplicaSet,
  workMessages,
} from './replica-set.ts';
export { type ResizeOptions, type ResizeResult, runResizeUnderKill } from './resize-under-kill.ts';
export { freshSeed, type SeededRandom, seededRandom } from './seeded-random.ts';
export {
  snapshotCopiesInProgress,
  snapshotCopyName,
  snapshotDataDir,
  snapshotLeftovers,
  unexpectedSnapshotEntries,
} from './snapshot-area.ts';
export { runSnapshotUnderKill, type SnapshotOptions, type SnapshotResult } from './snapshot-under-kill.ts';
export { runTakeBackUnderKill, type TakeBackOptions, type TakeBackResult } from './take-back-under-kill.ts';
export {
  clonesInProgress,
  digestDifferences,
  type RecordTimes,
  readRecord,
  treeDigest,
  writeTree,
} from './volume-files.ts';
