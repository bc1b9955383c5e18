/**
 * The flags every provisioner CLI shares: API access and throttling, which claims to serve, worker
 * count, how PVs are saved, the Lease namespace and log verbosity. A program merges {@link provisionerFlags} into its own
 * table and reads them with {@link readProvisionerFlags}.
 */
import { defaultRateLimit, type RateLimit } from '../client/request-limiter.ts';
import { pvSaveDefaults, pvSaveStrategies } from '../internal/pv-save.ts';
import { defaults } from '../internal/resolve-options.ts';
import type { PvSaveStrategy } from '../pv-save-options.ts';
import { type FlagSpecs, type ParsedFlags, UsageError } from './flags.ts';

/** Names of {@link provisionerFlags}. */
export type ProvisionerFlagName =
  | 'kubeconfig'
  | 'leader-election-namespace'
  | 'claim-label-selector'
  | 'kube-api-qps'
  | 'kube-api-burst'
  | 'threadiness'
  | 'pv-save-strategy'
  | 'v';

/** The shared flags, each with an environment fallback. */
export const provisionerFlags: FlagSpecs<ProvisionerFlagName> = {
  kubeconfig: { env: 'KUBECONFIG', description: 'kubeconfig file; in-cluster credentials when unset' },
  'leader-election-namespace': {
    env: 'POD_NAMESPACE',
    description: "namespace of the leader-election Lease; the service account's when unset",
  },
  'claim-label-selector': {
    env: 'CLAIM_LABEL_SELECTOR',
    description: 'cache and serve only claims matching this label selector (e.g. tier=db); all when unset',
  },
  'kube-api-qps': {
    env: 'KUBE_API_QPS',
    default: String(defaultRateLimit.qps),
    description: 'client-side limit of API requests per second',
  },
  'kube-api-burst': {
    env: 'KUBE_API_BURST',
    default: String(defaultRateLimit.burst),
    description: 'API requests allowed at once above that rate',
  },
  threadiness: {
    env: 'THREADINESS',
    default: String(defaults.threadiness),
    description: 'claim workers, and as many volume workers',
  },
  'pv-save-strategy': {
    env: 'PV_SAVE_STRATEGY',
    default: pvSaveDefaults.strategy,
    description:
      'queue: retry failed PV saves in the background, freeing the worker; blocking: retry 5 times 10 s apart in the worker, then delete the volume',
  },
  v: {
    env: 'VERBOSITY',
    default: '0',
    description: 'log verbosity, klog style (-v=4 works too): 0-2 info, 3-4 debug, 5+ trace',
  },
};

/** The shared settings, validated; a program's options extend them. */
export interface ProvisionerCliOptions {
  /** Out-of-cluster credentials; `undefined` means in-cluster. */
  readonly kubeconfig: string | undefined;
  /** Namespace of the Lease; `undefined` lets the controller pick (service-account namespace). */
  readonly leaderElectionNamespace: string | undefined;
  /** `ProvisionControllerOptions.claimLabelSelector`; `undefined` serves every claim. */
  readonly claimLabelSelector: string | undefined;
  /** Client-side throttle of the API client. */
  readonly kubeApiRateLimit: RateLimit;
  /** `ProvisionControllerOptions.threadiness`. */
  readonly threadiness: number;
  /** `ProvisionControllerOptions.pvSave.strategy`. */
  readonly pvSaveStrategy: PvSaveStrategy;
  /** klog-style verbosity. */
  readonly verbosity: number;
  /** `--help` was given: print the help text and exit 0. */
  readonly help: boolean;
  /** Flags accepted without effect (klog's), logged as warnings at start. */
  readonly warnings: readonly string[];
}

/** Reads the shared flags. @throws UsageError for a malformed value. */
export function readProvisionerFlags(flags: ParsedFlags<ProvisionerFlagName>): ProvisionerCliOptions {
  return {
    kubeconfig: flags.string('kubeconfig'),
    leaderElectionNamespace: flags.string('leader-election-namespace'),
    claimLabelSelector: flags.string('claim-label-selector'),
    kubeApiRateLimit: {
      qps: flags.positiveNumber('kube-api-qps'),
      burst: flags.integer('kube-api-burst', 1, 100_000),
    },
    threadiness: flags.integer('threadiness', 1, 1_000),
    pvSaveStrategy: readPvSaveStrategy(flags),
    verbosity: flags.integer('v', 0, 10),
    help: flags.help,
    warnings: flags.warnings,
  };
}

function readPvSaveStrategy(flags: ParsedFlags<ProvisionerFlagName>): PvSaveStrategy {
  const value = flags.string('pv-save-strategy');
  const strategy = pvSaveStrategies.find((candidate) => candidate === value);
  if (strategy === undefined) {
    throw new UsageError(
      `--pv-save-strategy must be ${pvSaveStrategies.join(' or ')}, got ${JSON.stringify(value)}`,
    );
  }
  return strategy;
}
