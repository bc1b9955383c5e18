/** What every phase of the suite runs against. */
import type { KubeApi } from '@kube-provisioner/controller';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ChaosTarget } from './chaos-targets.ts';
import type { LeaseTracker } from './lease-tracker.ts';

/** The target under test, its Lease and the cluster, shared by the options of every phase. */
export interface PhaseContext {
  readonly target: ChaosTarget;
  readonly lease: LeaseTracker;
  readonly api: KubeApi;
  readonly kubeConfig: KubeConfig;
  /** How long the phase waits for each outcome (claims Bound, PVs gone) before recording a miss. */
  readonly waitMs: number;
}
