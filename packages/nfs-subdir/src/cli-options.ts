/**
 * Command line of `nfs-client-provisioner` and `nfs-subdir-provisioner`: upstream's environment
 * variables, each also available as a flag (a flag wins; an empty variable counts as unset).
 */
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { goBooleanSpellings, parseGoBoolean } from './go-bool.ts';
import { parseGoDuration } from './go-duration.ts';
import { defaultMountRoot } from './nfs-provisioner.ts';

/** Validated start-up configuration. */
export interface NfsCliOptions {
  readonly server: string;
  readonly exportPath: string;
  readonly provisionerName: string;
  readonly mountRoot: string;
  /** Out-of-cluster credentials; `undefined` means in-cluster. */
  readonly kubeconfig: string | undefined;
  readonly leaderElection: boolean;
  /** Namespace of the Lease; `undefined` lets the controller pick (service-account namespace). */
  readonly leaderElectionNamespace: string | undefined;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Port of `/metrics`, `/healthz` and `/readyz`; 0 disables the server. */
  readonly metricsPort: number;
  /** klog-style verbosity. */
  readonly verbosity: number;
  readonly help: boolean;
}

interface FlagSpec {
  readonly env?: string;
  readonly description: string;
  readonly default?: string;
}

const flags = {
  'nfs-server': { env: 'NFS_SERVER', description: 'NFS server written into every PV (required)' },
  'nfs-path': { env: 'NFS_PATH', description: 'exported path on the server (required)' },
  'provisioner-name': {
    env: 'PROVISIONER_NAME',
    description: 'StorageClass.provisioner to serve (required)',
  },
  'mount-root': {
    env: 'NFS_MOUNT_ROOT',
    default: defaultMountRoot,
    description: 'where the export is mounted in this container',
  },
  kubeconfig: { env: 'KUBECONFIG', description: 'kubeconfig file; in-cluster credentials when unset' },
  'leader-election': {
    env: 'ENABLE_LEADER_ELECTION',
    default: 'true',
    description: 'elect one active replica with a Lease (Go boolean)',
  },
  'leader-election-namespace': { env: 'POD_NAMESPACE', description: 'namespace of the Lease' },
  'leader-election-lease-duration': { default: '15s', description: 'Lease duration (Go duration)' },
  'leader-election-renew-deadline': { default: '10s', description: 'renew deadline of the leader' },
  'leader-election-retry-period': { default: '2s', description: 'retry period of the candidates' },
  'metrics-port': {
    env: 'METRICS_PORT',
    default: '8080',
    description: 'port of /metrics, /healthz and /readyz; 0 = off',
  },
  v: {
    env: 'VERBOSITY',
    default: '0',
    description: 'log verbosity (klog levels: 0-2 info, 3-4 debug, 5+ trace)',
  },
} as const satisfies Record<string, FlagSpec>;

type FlagName = keyof typeof flags;

/** Thrown for an invalid command line or environment; the CLI prints it and exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Help text listing every flag with its environment variable and default. */
export function usage(program: string): string {
  const lines = Object.entries(flags).map(([name, spec]: [string, FlagSpec]) => {
    const env = spec.env === undefined ? '' : ` [$${spec.env}]`;
    const fallback = spec.default === undefined ? '' : ` (default ${spec.default})`;
    return `  --${name} <value>${env} ${spec.description}${fallback}`;
  });
  return [`Usage: ${program} [flags]`, '', ...lines, '  --help'].join('\n');
}

/**
 * Parses flags, falling back to environment variables, then to defaults.
 *
 * @throws UsageError for unknown flags, malformed values or missing required settings.
 */
export function parseCliOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): NfsCliOptions {
  let values: Partial<Record<string, string | boolean | undefined>>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(Object.keys(flags).map((name) => [name, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const help = values.help === true;
  const read = (name: FlagName): string | undefined => {
    const spec: FlagSpec = flags[name];
    const flag = values[name];
    const value = typeof flag === 'string' ? flag : spec.env === undefined ? undefined : env[spec.env];
    return value === undefined || value === '' ? spec.default : value;
  };
  const required = (name: FlagName): string => {
    const value = read(name);
    if (value !== undefined || help) return value ?? '';
    const spec: FlagSpec = flags[name];
    throw new UsageError(`${spec.env} not set: pass --${name} or set ${spec.env}`);
  };
  const duration = (name: FlagName): number => {
    const value = read(name) ?? '';
    const ms = parseGoDuration(value);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(
        `--${name} must be a positive Go duration such as 15s, got ${JSON.stringify(value)}`,
      );
    }
    return ms;
  };

  const server = required('nfs-server');
  const exportPath = required('nfs-path');
  if (!help && !isAbsolute(exportPath)) {
    throw new UsageError(`NFS_PATH must be an absolute path, got ${JSON.stringify(exportPath)}`);
  }
  const mountRoot = read('mount-root') ?? defaultMountRoot;
  if (!isAbsolute(mountRoot) || resolve(mountRoot) === '/') {
    throw new UsageError(
      `--mount-root must be an absolute path other than /, got ${JSON.stringify(mountRoot)}`,
    );
  }
  const election = read('leader-election') ?? 'true';
  const leaderElection = parseGoBoolean(election);
  if (leaderElection === undefined) {
    throw new UsageError(
      `ENABLE_LEADER_ELECTION must be a Go boolean (${goBooleanSpellings}), got ${JSON.stringify(election)}`,
    );
  }
  return {
    server,
    exportPath,
    provisionerName: required('provisioner-name'),
    mountRoot: resolve(mountRoot),
    kubeconfig: read('kubeconfig'),
    leaderElection,
    leaderElectionNamespace: read('leader-election-namespace'),
    leaseDurationMs: duration('leader-election-lease-duration'),
    renewDeadlineMs: duration('leader-election-renew-deadline'),
    retryPeriodMs: duration('leader-election-retry-period'),
    metricsPort: readInteger('metrics-port', read('metrics-port'), 0, 65535),
    verbosity: readInteger('v', read('v'), 0, 10),
    help,
  };
}

function readInteger(name: FlagName, value: string | undefined, min: number, max: number): number {
  const number = Number(value);
  if (value === undefined || !/^\d+$/u.test(value) || number < min || number > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return number;
}
