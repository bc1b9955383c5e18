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
import type { BackoffOptions } from '../util/backoff.ts';
import { hasBrand, markBranded } from '../util/brand.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { RateLimiter } from '../workqueue/rate-limiters.ts';
import { defaultVolumeName } from './claim-fields.ts';

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

/** Backoff of the blocking PV save (Go `CreateProvisionedPVBackoff`): `steps` attempts, delays in ms. */
export interface SaveBackoff extends Pick<BackoffOptions, 'initial' | 'factor' | 'jitter' | 'cap'> {
  /** Number of create attempts, at least 1. */
  readonly steps: number;
}

/** What `run()` does when the Lease is lost: campaign again (default), or reject. */
export type LeaseLossPolicy = 'campaign' | 'reject';

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

  /** Deprecated (Go): attempts of the blocking PV save. Default 5. */
  readonly createProvisionedPVRetryCount?: number;
  /** Deprecated (Go): pause between those attempts. Default 10 s. */
  readonly createProvisionedPVIntervalMs?: number;
  /** Deprecated (Go): custom backoff of the blocking PV save. */
  readonly createProvisionedPVBackoff?: SaveBackoff;
  /** Selects the queue store: failed saves are retried forever with this limiter, in the background. */
  readonly createProvisionedPVLimiter?: RateLimiter;
  /** Workers of the queue store. Default 4. */
  readonly saveQueueWorkers?: number;

  /** Built-in Lease leader election. Default true. */
  readonly leaderElection?: boolean;
  /** Namespace of the Lease. Default env `POD_NAMESPACE`, else the service-account namespace, else `default`. */
  readonly leaderElectionNamespace?: string;
  /** Default 15 s. */
  readonly leaseDurationMs?: number;
  /** Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Default 2 s. */
  readonly retryPeriodMs?: number;
  /** Give up the Lease on graceful stop. Default true. */
  readonly releaseLeaseOnShutdown?: boolean;
  /**
   * What happens when the Lease is lost or its fence lapses (no renewal for `renewDeadlineMs`, e.g.
   * through an API outage or a frozen process). Either way every operation in flight is aborted at
   * once and nothing more is done as leader. `'campaign'` (default): `run()` goes on, campaigns
   * again and leads again only after acquiring the Lease afresh, so an outage never ends the
   * process. `'reject'`: `run()` rejects with a `LeaderElectionLostError`, as Go's library exits.
   */
  readonly onLeaseLost?: LeaseLossPolicy;

  /** Where the collectors are registered. Default: a private registry, see `ProvisionController.registry`. */
  readonly metricsRegistry?: Registry;
  /**
   * Port of the built-in server; 0 = none. Default 0. When set, `run()` serves the registry on
   * `metricsPath` and the probes on `/healthz` and `/readyz` on every replica, leader or not, from
   * its start until it settles; a port that cannot be bound rejects `run()`.
   */
  readonly metricsPort?: number;
  /** Listen address of the built-in server. Default `0.0.0.0`. */
  readonly metricsAddress?: string;
  /** Default `/metrics`; `/healthz` and `/readyz` are taken by the probes. */
  readonly metricsPath?: string;

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
}

/** The blocking PV save's schedule, resolved from the three deprecated options. */
export type SaveStrategy =
  | { readonly kind: 'blocking'; readonly backoff: SaveBackoff }
  | { readonly kind: 'queue'; readonly limiter: RateLimiter };

/** Options after defaults and validation; frozen. */
export interface ResolvedOptions {
  readonly api: KubeApi;
  readonly provisionerName: string;
  readonly provisioner: Provisioner;
  readonly knownNames: ReadonlySet<string>;
  readonly volumeName: (claim: Readonly<V1PersistentVolumeClaim>) => string;
  readonly resyncPeriodMs: number;
  readonly threadiness: number;
  readonly rateLimiter: (() => RateLimiter) | undefined;
  readonly exponentialBackOffOnError: boolean;
  readonly failedProvisionThreshold: number;
  readonly failedDeleteThreshold: number;
  readonly provisionTimeoutMs: number;
  readonly deletionTimeoutMs: number;
  readonly retryIntervalMaxMs: number;
  readonly maintenanceIntervalMs: number;
  readonly addFinalizer: boolean;
  readonly save: SaveStrategy;
  readonly saveQueueWorkers: number;
  readonly leaderElection: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly releaseLeaseOnShutdown: boolean;
  readonly onLeaseLost: LeaseLossPolicy;
  readonly metricsRegistry: Registry | undefined;
  readonly metricsPort: number;
  readonly metricsAddress: string;
  readonly metricsPath: string;
  readonly claimsInformer: SharedInformer<V1PersistentVolumeClaim> | undefined;
  readonly volumesInformer: SharedInformer<V1PersistentVolume> | undefined;
  readonly classesInformer: SharedInformer<V1StorageClass> | undefined;
  readonly claimLabelSelector: string | undefined;
  readonly claimFieldSelector: string | undefined;
  readonly verifyExistingPV: boolean;
  readonly pvDeletePrecondition: boolean;
  readonly rescheduleMode: RescheduleMode;
  readonly separateQueueLimiters: boolean;
  readonly apiRequestTimeoutMs: number;
  readonly eventRateLimit: RateLimit;
  readonly shutdownTimeoutMs: number;
  readonly clock: Clock | undefined;
  readonly logger: Logger | undefined;
}

const second = 1000;
const minute = 60 * second;

/** Go defaults and the port's own. */
export const defaults: {
  readonly resyncPeriodMs: number;
  readonly threadiness: number;
  readonly failedThreshold: number;
  readonly retryIntervalMaxMs: number;
  readonly maintenanceIntervalMs: number;
  readonly saveRetryCount: number;
  readonly saveIntervalMs: number;
  readonly saveQueueWorkers: number;
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
  saveRetryCount: 5,
  saveIntervalMs: 10 * second,
  saveQueueWorkers: 4,
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
  const check = new Checker(options as unknown as Record<string, unknown>, problems);
  if (typeof options.api?.resource !== 'function') problems.push('api must be a KubeApi');
  if (typeof options.provisionerName !== 'string' || options.provisionerName === '') {
    problems.push('provisionerName must be a non-empty string');
  }
  if (
    typeof options.provisioner?.provision !== 'function' ||
    typeof options.provisioner.delete !== 'function'
  ) {
    problems.push('provisioner must implement provision and delete');
  }
  const dataSources: unknown = options.provisioner?.dataSources;
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
  const additional = options.additionalProvisionerNames ?? [];
  if (!Array.isArray(additional) || !additional.every((name) => typeof name === 'string' && name !== '')) {
    problems.push('additionalProvisionerNames must be an array of non-empty strings');
  }
  check.fn('volumeName');
  check.fn('rateLimiter');
  check.limiter('createProvisionedPVLimiter');
  check.oneOf('rescheduleMode', ['merge-patch', 'update']);
  check.oneOf('onLeaseLost', ['campaign', 'reject']);
  for (const key of [
    'exponentialBackOffOnError',
    'addFinalizer',
    'leaderElection',
    'releaseLeaseOnShutdown',
    'verifyExistingPV',
    'pvDeletePrecondition',
    'separateQueueLimiters',
  ] as const) {
    check.boolean(key);
  }
  for (const key of [
    'leaderElectionNamespace',
    'metricsAddress',
    'metricsPath',
    'claimLabelSelector',
    'claimFieldSelector',
  ] as const) {
    check.string(key);
  }
  if (options.metricsPath !== undefined && !options.metricsPath.startsWith('/')) {
    problems.push(`metricsPath must start with "/", got ${JSON.stringify(options.metricsPath)}`);
  }
  if (probePaths.includes(options.metricsPath ?? '')) {
    problems.push(`metricsPath must not be ${probePaths.join(' or ')}: the probes are served there`);
  }

  const resolved: ResolvedOptions = {
    api: options.api,
    provisionerName: options.provisionerName,
    provisioner: options.provisioner,
    knownNames: new Set([options.provisionerName, ...(Array.isArray(additional) ? additional : [])]),
    volumeName: options.volumeName ?? defaultVolumeName,
    resyncPeriodMs: check.duration('resyncPeriodMs', defaults.resyncPeriodMs),
    threadiness: check.integer('threadiness', defaults.threadiness, 1),
    rateLimiter: options.rateLimiter,
    exponentialBackOffOnError: options.exponentialBackOffOnError ?? true,
    failedProvisionThreshold: check.integer('failedProvisionThreshold', defaults.failedThreshold, 0),
    failedDeleteThreshold: check.integer('failedDeleteThreshold', defaults.failedThreshold, 0),
    provisionTimeoutMs: check.duration('provisionTimeoutMs', 0),
    deletionTimeoutMs: check.duration('deletionTimeoutMs', 0),
    retryIntervalMaxMs: check.duration('retryIntervalMaxMs', defaults.retryIntervalMaxMs),
    maintenanceIntervalMs: check.duration('maintenanceIntervalMs', defaults.maintenanceIntervalMs),
    addFinalizer: options.addFinalizer ?? false,
    save: resolveSaveStrategy(options, check, problems),
    saveQueueWorkers: check.integer('saveQueueWorkers', defaults.saveQueueWorkers, 1),
    leaderElection: options.leaderElection ?? true,
    leaderElectionNamespace: options.leaderElectionNamespace || inClusterNamespace(),
    leaseDurationMs: check.duration('leaseDurationMs', defaults.leaseDurationMs),
    renewDeadlineMs: check.duration('renewDeadlineMs', defaults.renewDeadlineMs),
    retryPeriodMs: check.duration('retryPeriodMs', defaults.retryPeriodMs),
    releaseLeaseOnShutdown: options.releaseLeaseOnShutdown ?? true,
    onLeaseLost: options.onLeaseLost ?? 'campaign',
    metricsRegistry: options.metricsRegistry,
    metricsPort: check.integer('metricsPort', 0, 0, 65_535),
    metricsAddress: options.metricsAddress ?? '0.0.0.0',
    metricsPath: options.metricsPath ?? '/metrics',
    claimsInformer: options.claimsInformer,
    volumesInformer: options.volumesInformer,
    classesInformer: options.classesInformer,
    claimLabelSelector: options.claimLabelSelector,
    claimFieldSelector: options.claimFieldSelector,
    verifyExistingPV: options.verifyExistingPV ?? true,
    pvDeletePrecondition: options.pvDeletePrecondition ?? true,
    rescheduleMode: options.rescheduleMode ?? 'merge-patch',
    separateQueueLimiters: options.separateQueueLimiters ?? true,
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

/** The three mutually exclusive save option groups. */
function resolveSaveStrategy(
  options: ProvisionControllerOptions,
  check: Checker,
  problems: string[],
): SaveStrategy {
  const groups = [
    options.createProvisionedPVRetryCount !== undefined || options.createProvisionedPVIntervalMs !== undefined
      ? 'createProvisionedPVRetryCount/createProvisionedPVIntervalMs'
      : undefined,
    options.createProvisionedPVBackoff !== undefined ? 'createProvisionedPVBackoff' : undefined,
    options.createProvisionedPVLimiter !== undefined ? 'createProvisionedPVLimiter' : undefined,
  ].filter((group) => group !== undefined);
  if (groups.length > 1) problems.push(`${groups.join(', ')} cannot be used together`);

  if (options.createProvisionedPVLimiter !== undefined) {
    return { kind: 'queue', limiter: options.createProvisionedPVLimiter };
  }
  const custom = options.createProvisionedPVBackoff;
  if (custom !== undefined) {
    const valid =
      typeof custom === 'object' &&
      Number.isInteger(custom.steps) &&
      custom.steps >= 1 &&
      custom.initial >= 0 &&
      (custom.factor ?? 1) >= 1 &&
      (custom.jitter ?? 0) >= 0 &&
      (custom.cap ?? 0) >= 0;
    if (!valid)
      problems.push(
        'createProvisionedPVBackoff needs integer steps >= 1, initial >= 0, factor >= 1, jitter >= 0',
      );
    return { kind: 'blocking', backoff: { factor: 1, ...custom } };
  }
  return {
    kind: 'blocking',
    backoff: {
      steps: check.integer('createProvisionedPVRetryCount', defaults.saveRetryCount, 1),
      initial: check.duration('createProvisionedPVIntervalMs', defaults.saveIntervalMs),
      factor: 1,
    },
  };
}

/** Type and range checks that record a problem and fall back to the default. */
class Checker {
  readonly #options: Record<string, unknown>;
  readonly #problems: string[];

  constructor(options: Record<string, unknown>, problems: string[]) {
    this.#options = options;
    this.#problems = problems;
  }

  duration(key: string, fallback: number): number {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.#problems.push(`${key} must be a finite number of milliseconds >= 0, got ${String(value)}`);
      return fallback;
    }
    return value;
  }

  integer(key: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.#problems.push(`${key} must be an integer in [${min}, ${max}], got ${String(value)}`);
      return fallback;
    }
    return value;
  }

  boolean(key: string): void {
    const value = this.#options[key];
    if (value !== undefined && typeof value !== 'boolean') this.#problems.push(`${key} must be a boolean`);
  }

  string(key: string): void {
    const value = this.#options[key];
    if (value !== undefined && typeof value !== 'string') this.#problems.push(`${key} must be a string`);
  }

  fn(key: string): void {
    const value = this.#options[key];
    if (value !== undefined && typeof value !== 'function') this.#problems.push(`${key} must be a function`);
  }

  rateLimit(key: string, fallback: RateLimit): RateLimit {
    const value = this.#options[key] as Partial<RateLimit> | undefined;
    if (value === undefined) return fallback;
    const { qps, burst } = value ?? {};
    // The same bounds as the token bucket's: it would throw later, at the first event.
    const valid =
      typeof qps === 'number' &&
      qps > 0 &&
      typeof burst === 'number' &&
      (burst >= 1 || qps === Number.POSITIVE_INFINITY);
    if (!valid) {
      this.#problems.push(`${key} needs qps > 0 and burst >= 1, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return { qps, burst };
  }

  limiter(key: string): void {
    const value = this.#options[key] as Partial<RateLimiter> | undefined;
    if (value !== undefined && (typeof value?.when !== 'function' || typeof value.forget !== 'function')) {
      this.#problems.push(`${key} must be a RateLimiter`);
    }
  }

  oneOf(key: string, allowed: readonly string[]): void {
    const value = this.#options[key];
    if (value !== undefined && !allowed.includes(value as string)) {
      this.#problems.push(`${key} must be one of ${allowed.join(', ')}, got ${String(value)}`);
    }
  }
}
