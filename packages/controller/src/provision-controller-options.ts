/**
 * Options of {@link ProvisionController}: every option of the Go library (under the names listed in
 * the package README's migration table) plus the port's own, validated completely at construction.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { RateLimit } from './client/request-limiter.ts';
import type { KubeApi } from './client/resource-client.ts';
import type { SharedInformer } from './informer/shared-informer.ts';
import type { LeaderElectionOptions, MetricsServerOptions } from './process-options.ts';
import type { Provisioner } from './provisioner.ts';
import type { PvSaveOptions } from './pv-save-options.ts';
import type { Clock } from './util/clock.ts';
import type { Logger } from './util/logger.ts';
import type { RateLimiter } from './workqueue/rate-limiters.ts';

/**
 * How a reschedule removes the selected-node annotation: JSON merge patch (default), or Go's full PUT
 * of the claim read afresh, started over on a conflict (v13.1.0).
 */
export type RescheduleMode = 'merge-patch' | 'update';

/** Options of {@link ProvisionController}. Durations are milliseconds. */
export interface ProvisionControllerOptions {
  /** API access. */
  readonly api: KubeApi;
  /** The name claims and classes ask for, e.g. `example.com/hostpath`. */
  readonly provisionerName: string;
  readonly provisioner: Provisioner;
  /** Extra names treated as ours (e.g. an in-tree plugin under CSI migration). */
  readonly additionalProvisionerNames?: readonly string[];
  /** PV naming hook; MUST be deterministic. Default `pvc-<claim UID>`. */
  readonly volumeName?: (claim: Readonly<V1PersistentVolumeClaim>) => string;

  /** Informer resync period. Default 15 min. */
  readonly resyncPeriodMs?: number;
  /** Claim workers, and as many volume workers. Default 4. */
  readonly threadiness?: number;
  /**
   * Creates the limiter of a work queue; replaces the default for both queues (one call per queue
   * unless `separateQueueLimiters` is false). `exponentialBackOffOnError` is then ignored.
   */
  readonly rateLimiter?: () => RateLimiter;
  /** true: per-item exponential 15 s…1000 s; false: constant 15 s; both with a 10 qps/100 bucket. Default true. */
  readonly exponentialBackOffOnError?: boolean;
  /** Requeues of a failing claim before giving up; 0 = forever. Default 15. */
  readonly failedProvisionThreshold?: number;
  /** Requeues of a failing volume before giving up; 0 = forever. Default 15. */
  readonly failedDeleteThreshold?: number;
  /** Deadline of one claim work item; 0 = none. Default 0. Never cancels a PV save. */
  readonly provisionTimeoutMs?: number;
  /** Deadline of one volume work item; 0 = none. Default 0. */
  readonly deletionTimeoutMs?: number;
  /** Slow-retry window after an infeasible error. Default 5 min. */
  readonly retryIntervalMaxMs?: number;
  /** Pause between two calls of {@link Provisioner.maintain}. Default 10 min. */
  readonly maintenanceIntervalMs?: number;
  /** Manage the PV finalizer `external-provisioner.volume.kubernetes.io/finalizer`. Default false. */
  readonly addFinalizer?: boolean;

  /**
   * How the PV that `provision` returned is saved (the CLIs' `--pv-save-strategy`). Default
   * `{ strategy: 'queue' }`.
   */
  readonly pvSave?: PvSaveOptions;

  /** Where the collectors are registered. Default: a private registry, see `ProvisionController.registry`. */
  readonly metricsRegistry?: Registry;

  /**
   * Caller-owned claim informer; the caller starts it. It must carry the `uid` index, or accept it
   * before it starts.
   */
  readonly claimsInformer?: SharedInformer<V1PersistentVolumeClaim>;
  /** Caller-owned PV informer; the caller starts it. */
  readonly volumesInformer?: SharedInformer<V1PersistentVolume>;
  /** Caller-owned StorageClass informer (v1, or v1beta1 objects, which have the same fields); the caller starts it. */
  readonly classesInformer?: SharedInformer<V1StorageClass>;

  /** Restrict the claims cached and provisioned (kubernetes#127426). Default: all. */
  readonly claimLabelSelector?: string;
  readonly claimFieldSelector?: string;
  /** On PV save `AlreadyExists`, succeed only if the existing PV points at the claim. Default true. */
  readonly verifyExistingPV?: boolean;
  /** Send the PV UID as a delete precondition. Default true. */
  readonly pvDeletePrecondition?: boolean;
  /** Default `merge-patch`. */
  readonly rescheduleMode?: RescheduleMode;
  /** One limiter instance per queue (Go shares one). Default true. */
  readonly separateQueueLimiters?: boolean;
  /** Deadline of every API call, PV saves included; 0 = none. Default 30 s. */
  readonly apiRequestTimeoutMs?: number;
  /**
   * Client-side limit of Event writes. When `api` is a `KubeApiClient` the events get a limiter of
   * their own at this rate, so they never take the tokens of PV creates and deletes; otherwise they
   * share `api`'s. Default 20 QPS, burst 30: events are written one at a time in the background, and
   * a burst beyond the recorder's queue drops them (counted) rather than slowing the API server.
   */
  readonly eventRateLimit?: RateLimit;
  /** How long a graceful stop waits for in-flight work before aborting it. Default 30 s. */
  readonly shutdownTimeoutMs?: number;

  /** Time source. Default the wall clock. */
  readonly clock?: Clock;
  /** Structured logger. Default: JSON lines on stderr at `info`. */
  readonly logger?: Logger;

  // Process concerns, one group each (controller-runtime's manager options).
  /** Built-in Lease leader election: `false` turns it off, an object sets its Lease. Default on. */
  readonly leaderElection?: boolean | LeaderElectionOptions;
  /** The built-in server of `/metrics`, `/healthz` and `/readyz`. Default none. */
  readonly metricsServer?: MetricsServerOptions;
}
