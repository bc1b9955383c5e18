/**
 * Options of {@link ProvisionController}: every option of the Go library plus the port's own,
 * validated completely at construction. A bad option throws a {@link ConfigurationError}; the
 * library never exits the process.
 */
import { readFileSync } from 'node:fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { RateLimit } from '../client/request-limiter.ts';
import type { KubeApi } from '../client/resource-client.ts';
import type { SharedInformer } from '../informer/shared-informer.ts';
import { indexByUid, uidIndex } from '../informer/store.ts';
import type { Provisioner } from '../provisioner.ts';
import { hasBrand, markBranded } from '../util/brand.ts';
import { type Clock, realClock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { RateLimiter } from '../workqueue/rate-limiters.ts';
import { defaultVolumeName } from './claim-fields.ts';
import { Checker } from './option-checker.ts';
import {
  type FlatProcessOptions,
  foldAliases,
  type LeaderElectionOptions,
  leaderElectionAliases,
  type MetricsServerOptions,
  metricsServerAliases,
} from './process-options.ts';
import { type GoPvSaveOptions, type PvSaveOptions, type ResolvedPvSave, resolvePvSave } from './pv-save.ts';

const configurationErrorBrand: unique symbol = Symbol.for('@kube-provisioner/controller/ConfigurationError');

/** An invalid {@link ProvisionControllerOptions} value. `problems` lists every one found. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid ProvisionController options: ${problems.join('; ')}`);
    markBranded(this, configurationErrorBrand);
    this.problems = problems;
  }
}

/** Whether `err` is a {@link ConfigurationError} from any copy of this package. */
export function isConfigurationError(err: unknown): err is ConfigurationError {
  return hasBrand(err, configurationErrorBrand);
}

/**
 * How a reschedule removes the selected-node annotation: JSON merge patch (default), or Go's full PUT
 * of the claim read afresh, started over on a conflict (v13.1.0).
 */
export type RescheduleMode = 'merge-patch' | 'update';

/** Options of {@link ProvisionController}. Durations are milliseconds. */
export interface ProvisionControllerOptions extends GoPvSaveOptions, FlatProcessOptions {
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
   * `{ strategy: 'queue' }`. The Go option names (`createProvisionedPV…`) are deprecated aliases.
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

/** Options with no default: unset stays `undefined`. */
type WithoutDefault =
  | 'rateLimiter'
  | 'metricsRegistry'
  | 'claimsInformer'
  | 'volumesInformer'
  | 'classesInformer'
  | 'claimLabelSelector'
  | 'claimFieldSelector'
  | 'clock'
  | 'logger';

/** Options resolved into a field of another name or type. */
type Reshaped =
  | 'additionalProvisionerNames'
  | 'pvSave'
  | 'leaderElection'
  | 'metricsServer'
  | keyof GoPvSaveOptions
  | keyof FlatProcessOptions;

/**
 * Options after defaults and validation; frozen. Derived from {@link ProvisionControllerOptions}, so a
 * new option is declared once and resolved once, in {@link resolveOptions}.
 */
export type ResolvedOptions = Readonly<
  Required<Omit<ProvisionControllerOptions, WithoutDefault | Reshaped>> & {
    [Key in WithoutDefault]: ProvisionControllerOptions[Key];
  } & {
    /** `provisionerName` and `additionalProvisionerNames`. */
    knownNames: ReadonlySet<string>;
    pvSave: ResolvedPvSave;
    leaderElection: Readonly<Required<LeaderElectionOptions>> & { readonly enabled: boolean };
    metricsServer: Readonly<Required<MetricsServerOptions>>;
  }
>;

const second = 1000;
const minute = 60 * second;

/** Go defaults and the port's own. */
export const defaults: {
  readonly resyncPeriodMs: number;
  readonly threadiness: number;
  readonly failedThreshold: number;
  readonly retryIntervalMaxMs: number;
  readonly maintenanceIntervalMs: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly apiRequestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly eventRateLimit: RateLimit;
} = Object.freeze({
  resyncPeriodMs: 15 * minute,
  threadiness: 4,
  failedThreshold: 15,
  retryIntervalMaxMs: 5 * minute,
  maintenanceIntervalMs: 10 * minute,
  leaseDurationMs: 15 * second,
  renewDeadlineMs: 10 * second,
  retryPeriodMs: 2 * second,
  apiRequestTimeoutMs: 30 * second,
  shutdownTimeoutMs: 30 * second,
  eventRateLimit: Object.freeze({ qps: 20, burst: 30 }),
});

/** Paths the built-in server keeps for the probes. */
const probePaths: readonly string[] = ['/healthz', '/readyz'];

const serviceAccountNamespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Go's `getInClusterNamespace`: `POD_NAMESPACE`, else the service-account namespace file, else `default`. */
export function inClusterNamespace(
  env: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): string {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    const namespace = readFile(serviceAccountNamespaceFile).trim();
    if (namespace !== '') return namespace;
  } catch {
    // Not running in a pod.
  }
  return 'default';
}

/** Applies defaults and validates everything; throws one {@link ConfigurationError} listing all problems. */
export function resolveOptions(options: ProvisionControllerOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError(['options must be an object']);
  const problems: string[] = [];
  const check = new Checker(options, problems);
  if (typeof options.api?.resource !== 'function') problems.push('api must be a KubeApi');
  if (typeof options.provisionerName !== 'string' || options.provisionerName === '') {
    problems.push('provisionerName must be a non-empty string');
  }
  checkProvisioner(options.provisioner, problems);
  const additional = options.additionalProvisionerNames ?? [];
  if (!Array.isArray(additional) || !additional.every((name) => typeof name === 'string' && name !== '')) {
    problems.push('additionalProvisionerNames must be an array of non-empty strings');
  }
  check.fn('volumeName');
  check.fn('rateLimiter');
  const resolved: ResolvedOptions = {
    api: options.api,
    provisionerName: options.provisionerName,
    provisioner: options.provisioner,
    knownNames: new Set([options.provisionerName, ...(Array.isArray(additional) ? additional : [])]),
    volumeName: options.volumeName ?? defaultVolumeName,
    resyncPeriodMs: check.duration('resyncPeriodMs', defaults.resyncPeriodMs),
    threadiness: check.integer('threadiness', defaults.threadiness, 1),
    rateLimiter: options.rateLimiter,
    exponentialBackOffOnError: check.boolean('exponentialBackOffOnError', true),
    failedProvisionThreshold: check.integer('failedProvisionThreshold', defaults.failedThreshold, 0),
    failedDeleteThreshold: check.integer('failedDeleteThreshold', defaults.failedThreshold, 0),
    provisionTimeoutMs: check.duration('provisionTimeoutMs', 0),
    deletionTimeoutMs: check.duration('deletionTimeoutMs', 0),
    retryIntervalMaxMs: check.duration('retryIntervalMaxMs', defaults.retryIntervalMaxMs),
    maintenanceIntervalMs: check.duration('maintenanceIntervalMs', defaults.maintenanceIntervalMs),
    addFinalizer: check.boolean('addFinalizer', false),
    pvSave: resolvePvSave(options, options.clock ?? realClock, problems),
    leaderElection: resolveLeaderElection(options, problems),
    metricsRegistry: options.metricsRegistry,
    metricsServer: resolveMetricsServer(options, problems),
    claimsInformer: options.claimsInformer,
    volumesInformer: options.volumesInformer,
    classesInformer: options.classesInformer,
    claimLabelSelector: check.string('claimLabelSelector'),
    claimFieldSelector: check.string('claimFieldSelector'),
    verifyExistingPV: check.boolean('verifyExistingPV', true),
    pvDeletePrecondition: check.boolean('pvDeletePrecondition', true),
    rescheduleMode: check.oneOf('rescheduleMode', ['merge-patch', 'update'], 'merge-patch'),
    separateQueueLimiters: check.boolean('separateQueueLimiters', true),
    apiRequestTimeoutMs: check.duration('apiRequestTimeoutMs', defaults.apiRequestTimeoutMs),
    eventRateLimit: check.rateLimit('eventRateLimit', defaults.eventRateLimit),
    shutdownTimeoutMs: check.duration('shutdownTimeoutMs', defaults.shutdownTimeoutMs),
    clock: options.clock,
    logger: options.logger,
  };

  if (!(resolved.retryIntervalMaxMs > 0)) problems.push('retryIntervalMaxMs must be > 0');
  if (!(resolved.maintenanceIntervalMs > 0)) problems.push('maintenanceIntervalMs must be > 0');

  if (problems.length > 0) throw new ConfigurationError(problems);
  return Object.freeze(resolved);
}

/** The `leaderElection` group, its flat aliases folded in. */
function resolveLeaderElection(
  options: ProvisionControllerOptions,
  problems: string[],
): ResolvedOptions['leaderElection'] {
  const { leaderElection } = options;
  if (
    leaderElection !== undefined &&
    typeof leaderElection !== 'boolean' &&
    (typeof leaderElection !== 'object' || leaderElection === null)
  ) {
    problems.push('leaderElection must be a boolean or an object');
  }
  const { values, names } = foldAliases(options, 'leaderElection', leaderElectionAliases, problems);
  const check = new Checker(values, problems, (key) => names[key] ?? key);
  return {
    enabled: leaderElection !== false,
    namespace: check.string('namespace') || inClusterNamespace(),
    leaseDurationMs: check.duration('leaseDurationMs', defaults.leaseDurationMs),
    renewDeadlineMs: check.duration('renewDeadlineMs', defaults.renewDeadlineMs),
    retryPeriodMs: check.duration('retryPeriodMs', defaults.retryPeriodMs),
    releaseOnShutdown: check.boolean('releaseOnShutdown', true),
    onLost: check.oneOf('onLost', ['campaign', 'reject'], 'campaign'),
  };
}

/** The `metricsServer` group, its flat aliases folded in. */
function resolveMetricsServer(
  options: ProvisionControllerOptions,
  problems: string[],
): ResolvedOptions['metricsServer'] {
  const { values, names } = foldAliases(options, 'metricsServer', metricsServerAliases, problems);
  const check = new Checker(values, problems, (key) => names[key] ?? key);
  const path = check.string('path') ?? '/metrics';
  if (!path.startsWith('/')) problems.push(`${names.path} must start with "/", got ${JSON.stringify(path)}`);
  if (probePaths.includes(path)) {
    problems.push(`${names.path} must not be ${probePaths.join(' or ')}: the probes are served there`);
  }
  return {
    port: check.integer('port', 0, 0, 65_535),
    address: check.string('address') ?? '0.0.0.0',
    path,
  };
}

function checkProvisioner(provisioner: Provisioner | undefined, problems: string[]): void {
  if (typeof provisioner?.provision !== 'function' || typeof provisioner.delete !== 'function') {
    problems.push('provisioner must implement provision and delete');
  }
  const dataSources: unknown = provisioner?.dataSources;
  if (
    dataSources !== undefined &&
    !(
      Array.isArray(dataSources) &&
      dataSources.every(
        (kind: unknown) =>
          typeof kind === 'object' &&
          kind !== null &&
          typeof (kind as Record<string, unknown>).apiGroup === 'string' &&
          typeof (kind as Record<string, unknown>).kind === 'string' &&
          (kind as Record<string, unknown>).kind !== '',
      )
    )
  ) {
    problems.push("provisioner.dataSources must be an array of { apiGroup, kind } (apiGroup '' for core)");
  }
}

/**
 * Gives an injected claim informer the `uid` index if it lacks it. This changes the caller's informer,
 * so the controller calls it only once every other option has been accepted.
 *
 * @throws ConfigurationError when the informer lacks the index and has started (it cannot take one).
 */
export function ensureUidIndex(informer: SharedInformer<V1PersistentVolumeClaim>): void {
  try {
    informer.store.byIndex(uidIndex, '');
    return;
  } catch {
    // No such index yet.
  }
  try {
    informer.addIndexers({ [uidIndex]: indexByUid });
  } catch (err) {
    throw new ConfigurationError([
      `claimsInformer has no "${uidIndex}" index and cannot take one: ${String(err)}`,
    ]);
  }
}
