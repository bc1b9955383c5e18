/**
 * Command-line surface of `kube-hostpath-provisioner`: every flag has an environment fallback so the
 * same image works from a DaemonSet (downward API env) and from a shell.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultProvisionerName, type ProvisionerMode } from './hostpath-provisioner.ts';
import { defaultNodeAffinityKey } from './persistent-volume.ts';

/** Validated start-up configuration. */
export interface CliOptions {
  readonly mode: ProvisionerMode;
  readonly provisionerName: string;
  readonly root: string;
  /** Required in per-node mode. */
  readonly nodeName: string | undefined;
  readonly nodeAffinityKey: string;
  /** Out-of-cluster credentials; `undefined` means in-cluster (or the default kubeconfig). */
  readonly kubeconfig: string | undefined;
  /** Port of `/healthz`, `/readyz` and `/metrics`; 0 disables the server. */
  readonly healthPort: number;
  /** Namespace of the leader-election Lease (shared mode). */
  readonly leaderElectionNamespace: string | undefined;
  /** klog-style verbosity. */
  readonly verbosity: number;
  readonly help: boolean;
}

/** Default root directory on the node. */
export const defaultRoot = '/var/lib/kube-provisioner/hostpath';

interface FlagSpec {
  readonly env: string;
  readonly description: string;
  readonly default?: string;
}

const flags = {
  mode: {
    env: 'PROVISIONER_MODE',
    default: 'per-node',
    description: 'per-node (DaemonSet) or shared (leader-elected)',
  },
  'provisioner-name': {
    env: 'PROVISIONER_NAME',
    default: defaultProvisionerName,
    description: 'name in StorageClass.provisioner',
  },
  root: { env: 'HOSTPATH_ROOT', default: defaultRoot, description: 'directory that holds the volumes' },
  'node-name': {
    env: 'NODE_NAME',
    description: 'this node (downward API spec.nodeName); required in per-node mode',
  },
  'node-affinity-key': {
    env: 'NODE_AFFINITY_KEY',
    default: defaultNodeAffinityKey,
    description: 'node label used in PV node affinity (per-node mode)',
  },
  kubeconfig: { env: 'KUBECONFIG', description: 'kubeconfig file; in-cluster credentials when unset' },
  'health-port': {
    env: 'HEALTH_PORT',
    default: '8080',
    description: 'port of /healthz, /readyz and /metrics; 0 = off',
  },
  'leader-election-namespace': { env: 'POD_NAMESPACE', description: 'namespace of the Lease (shared mode)' },
  v: {
    env: 'VERBOSITY',
    default: '0',
    description: 'log verbosity (klog levels: 0-2 info, 3-4 debug, 5+ trace)',
  },
} as const satisfies Record<string, FlagSpec>;

type FlagName = keyof typeof flags;

/** Thrown for an invalid command line or environment; the CLI prints it and exits non-zero. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Help text listing every flag with its environment fallback and default. */
export function usage(): string {
  const lines = Object.entries(flags).map(([name, spec]: [string, FlagSpec]) => {
    const fallback = spec.default === undefined ? '' : ` (default ${spec.default})`;
    return `  --${name} <value>   [$${spec.env}] ${spec.description}${fallback}`;
  });
  return ['Usage: kube-hostpath-provisioner [flags]', '', ...lines, '  --help'].join('\n');
}

/**
 * Parses flags, falling back to environment variables, then to defaults.
 *
 * @throws UsageError for unknown flags, malformed values, or a per-node start without a node name.
 */
export function parseCliOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliOptions {
  let values: Partial<Record<FlagName | 'help', string | boolean | undefined>>;
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

  const read = (name: FlagName): string | undefined => {
    const spec: FlagSpec = flags[name];
    const flag = values[name];
    const value = typeof flag === 'string' ? flag : env[spec.env];
    return value === undefined || value === '' ? spec.default : value;
  };

  const mode = read('mode');
  if (mode !== 'per-node' && mode !== 'shared') {
    throw new UsageError(`--mode must be per-node or shared, got ${JSON.stringify(mode)}`);
  }
  const root = read('root') ?? defaultRoot;
  if (!isAbsolute(root) || resolve(root) === '/') {
    throw new UsageError(`--root must be an absolute path other than /, got ${JSON.stringify(root)}`);
  }
  const nodeName = read('node-name');
  if (mode === 'per-node' && nodeName === undefined && values.help !== true) {
    throw new UsageError(
      'per-node mode needs the node name: set NODE_NAME from the downward API (spec.nodeName) or pass --node-name',
    );
  }
  return {
    mode,
    provisionerName: read('provisioner-name') ?? defaultProvisionerName,
    root: resolve(root),
    nodeName,
    nodeAffinityKey: read('node-affinity-key') ?? defaultNodeAffinityKey,
    kubeconfig: read('kubeconfig'),
    healthPort: readInteger('health-port', read('health-port'), 0, 65535),
    leaderElectionNamespace: read('leader-election-namespace'),
    verbosity: readInteger('v', read('v'), 0, 10),
    help: values.help === true,
  };
}

function readInteger(name: FlagName, value: string | undefined, min: number, max: number): number {
  const number = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || number < min || number > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return number;
}
