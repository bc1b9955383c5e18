/**
 * Resolution of {@link ProvisionControllerOptions}: defaults, validation of every option at
 * construction (a bad one throws a {@link ConfigurationError}; the library never exits the process).
 */
import { readFileSync } from 'node:fs';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { RateLimit } from '../client/request-limiter.ts';
import { ConfigurationError } from '../configuration-error.ts';
import type { SharedInformer } from '../informer/shared-informer.ts';
import { indexByUid, uidIndex } from '../informer/store.ts';
import type { LeaderElectionOptions, MetricsServerOptions } from '../process-options.ts';
import type { ProvisionControllerOptions } from '../provision-controller-options.ts';
import type { Provisioner } from '../provisioner.ts';
import { realClock } from '../util/clock.ts';
import { defaultVolumeName } from './claim-fields.ts';
import { Checker } from './option-checker.ts';
import { type ResolvedPvSave, resolvePvSave } from './pv-save.ts';

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
type Reshaped = 'additionalProvisionerNames' | 'pvSave' | 'leaderElection' | 'metricsServer';

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

  // Every option has a field in `resolved` (knownNames is derived), so any other key is a typo or a
  // Go option name: ignoring it would run with a default the caller did not mean.
  const known = new Set<string>([...Object.keys(resolved), 'additionalProvisionerNames']);
  known.delete('knownNames');
  for (const key of Object.keys(options).filter((key) => !known.has(key))) {
    problems.push(
      `unknown option ${key} (the controller README lists every option, and Go's names beside ours)`,
    );
  }
  if (!(resolved.retryIntervalMaxMs > 0)) problems.push('retryIntervalMaxMs must be > 0');
  if (!(resolved.maintenanceIntervalMs > 0)) problems.push('maintenanceIntervalMs must be > 0');

  if (problems.length > 0) throw new ConfigurationError(problems);
  return Object.freeze(resolved);
}

/** The `leaderElection` group: `false` turns it off, an object sets its Lease. */
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
  const check = new Checker(groupFields(leaderElection), problems, (key) => `leaderElection.${key}`);
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

/** The `metricsServer` group. */
function resolveMetricsServer(
  options: ProvisionControllerOptions,
  problems: string[],
): ResolvedOptions['metricsServer'] {
  const { metricsServer } = options;
  if (metricsServer !== undefined && (typeof metricsServer !== 'object' || metricsServer === null)) {
    problems.push('metricsServer must be an object');
  }
  const check = new Checker(groupFields(metricsServer), problems, (key) => `metricsServer.${key}`);
  const path = check.string('path') ?? '/metrics';
  if (!path.startsWith('/')) {
    problems.push(`metricsServer.path must start with "/", got ${JSON.stringify(path)}`);
  }
  if (probePaths.includes(path)) {
    problems.push(`metricsServer.path must not be ${probePaths.join(' or ')}: the probes are served there`);
  }
  return {
    port: check.integer('port', 0, 0, 65_535),
    address: check.string('address') ?? '0.0.0.0',
    path,
  };
}

/** The fields of an option group; anything but an object (reported by the caller) has none. */
function groupFields(group: unknown): object {
  return typeof group === 'object' && group !== null ? group : {};
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
