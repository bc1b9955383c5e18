/**
 * Command-line surface of `kube-hostpath-provisioner`: every flag has an environment fallback so the
 * same image works from a DaemonSet (downward API env) and from a shell.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  type Environment,
  type FlagSpecs,
  type ProvisionerCliOptions,
  parseFlags,
  provisionerFlags,
  readProvisionerFlags,
  readUsageFlags,
  type UsageCliOptions,
  UsageError,
  usageFlags,
  usageText,
} from '@kube-provisioner/controller/cli';
import { defaultProvisionerName } from './hostpath-provisioner.ts';
import { parseNodeRootsConfig, rootsOfNode } from './node-roots-config.ts';
import { defaultNodeAffinityKey } from './persistent-volume.ts';
import type { ProvisionerMode } from './provisioner-mode.ts';
import { checkRoots, type NamedRoot } from './root-placement.ts';

/** Validated start-up configuration. */
export interface CliOptions extends ProvisionerCliOptions, UsageCliOptions {
  readonly mode: ProvisionerMode;
  readonly provisionerName: string;
  /** The root directory; with named roots, the first one's. */
  readonly root: string;
  /**
   * Per-node mode: the node's named roots (`--root fast=/mnt/nvme,bulk=/mnt/hdd`); `undefined` for
   * one bare `--root /path`, which keeps its layout and PVs.
   */
  readonly namedRoots?: readonly NamedRoot[] | undefined;
  /** Per-node mode: roots the node roots file marks retired (served, but taking no new volume). */
  readonly retiredRoots?: readonly NamedRoot[] | undefined;
  /**
   * Per-node mode: the node roots file (`--roots-config`) the named roots came from (none for a node
   * it gives none), read again every {@link rootsConfigIntervalMs} and applied when it changes.
   */
  readonly rootsConfig?:
    | {
        readonly path: string;
        /** The content read at start, which {@link namedRoots} are this node's roots of. */
        readonly text: string;
        /** The entry that applies: this node's, the default one, or `undefined` for none. */
        readonly entry: string | undefined;
      }
    | undefined;
  /** How often the node roots file is read again, in ms. */
  readonly rootsConfigIntervalMs: number;
  /** Required in per-node mode. */
  readonly nodeName: string | undefined;
  readonly nodeAffinityKey: string;
  /** Port of `/healthz`, `/readyz` and `/metrics`; 0 disables the server. */
  readonly healthPort: number;
  /**
   * Put external-provisioner's finalizer on the PVs of reclaim policy Delete, so deleting such a PV
   * by hand (`kubectl delete pv`) still removes its directory instead of orphaning it on the node.
   */
  readonly addFinalizer: boolean;
  /** Leader election of a shared root: Lease duration, renew deadline and retry period, in ms. */
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /**
   * Per-node mode: publish the root's capacity as `CSIStorageCapacity` objects for the scheduler
   * (`--publish-capacity`; `auto`, the default, is on when the provisioner name can be a CSIDriver's).
   */
  readonly publishCapacity: boolean;
  /** How often the capacity is published besides after each volume made or deleted, in ms. */
  readonly capacityIntervalMs: number;
  /** The instance's Pod (downward API): namespace of the capacity objects, and their owner. */
  readonly pod: {
    readonly namespace: string | undefined;
    readonly name: string | undefined;
    readonly uid: string | undefined;
  };
}

/** Name in messages and help. */
export const program = 'kube-hostpath-provisioner';

/** Default root directory on the node. */
export const defaultRoot = '/var/lib/kube-provisioner/hostpath';

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
  root: {
    env: 'HOSTPATH_ROOT',
    default: defaultRoot,
    description:
      'directory that holds the volumes, or per node several named ones: name=/path,name:label=/path (a new volume goes to the one with the most room)',
  },
  'roots-config': {
    env: 'HOSTPATH_ROOTS_CONFIG',
    description:
      "per-node mode: a node roots file (local-path-provisioner's config.json, nodePathMap) giving each node its roots, applied again when it changes; replaces --root",
  },
  'roots-config-interval': {
    env: 'HOSTPATH_ROOTS_CONFIG_INTERVAL',
    default: '10s',
    description: 'how often the node roots file is read again (Go duration)',
  },
  'node-name': {
    env: 'NODE_NAME',
    description: 'this node (downward API spec.nodeName); required in per-node mode',
  },
  'node-affinity-key': {
    env: 'NODE_AFFINITY_KEY',
    default: defaultNodeAffinityKey,
    description: 'node label used in PV node affinity (per-node mode)',
  },
  'health-port': {
    env: 'HEALTH_PORT',
    default: '8080',
    description: 'port of /healthz, /readyz and /metrics; 0 = off',
  },
  'add-finalizer': {
    env: 'ADD_FINALIZER',
    default: 'true',
    description:
      'keep external-provisioner.volume.kubernetes.io/finalizer on PVs of reclaim policy Delete until their directory is gone (Go boolean)',
  },
  'leader-election-lease-duration': {
    default: '15s',
    description: 'Lease duration in shared mode (Go duration)',
  },
  'leader-election-renew-deadline': { default: '10s', description: 'renew deadline of the leader' },
  'leader-election-retry-period': { default: '2s', description: 'retry period of the candidates' },
  'publish-capacity': {
    env: 'PUBLISH_CAPACITY',
    default: 'auto',
    description:
      'per-node mode: publish CSIStorageCapacity objects for capacity-aware scheduling: true, false, or auto (on when the provisioner name has no "/", so a CSIDriver can carry it)',
  },
  'capacity-interval': {
    env: 'CAPACITY_INTERVAL',
    default: '60s',
    description: 'how often the capacity is published besides after each provision and delete (Go duration)',
  },
  'pod-namespace': {
    env: 'POD_NAMESPACE',
    description: 'namespace of the published capacities (downward API metadata.namespace)',
  },
  'pod-name': { env: 'POD_NAME', description: 'this Pod, owner of the published capacities (metadata.name)' },
  'pod-uid': { env: 'POD_UID', description: "this Pod's UID (downward API metadata.uid)" },
  // A local disk: 500 calls a second are nothing beside the workloads' own.
  ...usageFlags(500),
  ...provisionerFlags,
} satisfies FlagSpecs;

/** Help text listing every flag with its environment fallback and default. */
export function usage(): string {
  return usageText(program, flags);
}

/**
 * Parses flags, falling back to environment variables, then to defaults.
 *
 * @throws UsageError for unknown flags, malformed values, or a per-node start without a node name.
 */
export function parseCliOptions(argv: readonly string[], env: Environment): CliOptions {
  const parsed = parseFlags(flags, argv, env);
  const mode = parsed.string('mode');
  if (mode !== 'per-node' && mode !== 'shared') {
    throw new UsageError(`--mode must be per-node or shared, got ${JSON.stringify(mode)}`);
  }
  const nodeName = parsed.string('node-name');
  if (mode === 'per-node' && nodeName === undefined && !parsed.help) {
    throw new UsageError(
      'per-node mode needs the node name: set NODE_NAME from the downward API (spec.nodeName) or pass --node-name',
    );
  }
  const rootsConfig = parsed.help
    ? undefined
    : readRootsConfig(parsed.string('roots-config'), parsed.string('root'), mode, nodeName ?? '');
  const namedRoots = rootsConfig?.roots ?? parseNamedRoots(parsed.string('root'), mode);
  const root = namedRoots?.[0]?.path ?? parsed.directory('root');
  const provisionerName = parsed.string('provisioner-name') ?? defaultProvisionerName;
  const publishCapacity = capacityPublishing(parsed.string('publish-capacity'), mode, provisionerName);
  const pod = {
    namespace: parsed.string('pod-namespace'),
    name: parsed.string('pod-name'),
    uid: parsed.string('pod-uid'),
  };
  if (publishCapacity && pod.namespace === undefined && !parsed.help) {
    throw new UsageError(
      'publishing capacity needs the namespace: set POD_NAMESPACE from the downward API (metadata.namespace) or pass --publish-capacity=false',
    );
  }
  return {
    mode,
    provisionerName,
    root,
    ...(namedRoots === undefined ? {} : { namedRoots }),
    ...(rootsConfig === undefined
      ? {}
      : { rootsConfig: rootsConfig.file, retiredRoots: rootsConfig.retired }),
    rootsConfigIntervalMs: parsed.goDuration('roots-config-interval'),
    nodeName,
    nodeAffinityKey: parsed.string('node-affinity-key') ?? defaultNodeAffinityKey,
    healthPort: parsed.integer('health-port', 0, 65535),
    addFinalizer: parsed.goBoolean('add-finalizer'),
    leaseDurationMs: parsed.goDuration('leader-election-lease-duration'),
    renewDeadlineMs: parsed.goDuration('leader-election-renew-deadline'),
    retryPeriodMs: parsed.goDuration('leader-election-retry-period'),
    publishCapacity,
    capacityIntervalMs: parsed.goDuration('capacity-interval'),
    pod,
    ...readUsageFlags(parsed),
    ...readProvisionerFlags(parsed),
  };
}

/**
 * Whether capacity is published: only per node, and by default only when a CSIDriver can carry the
 * provisioner name (no `/`), the one case in which the scheduler reads the objects.
 */
function capacityPublishing(
  value: string | undefined,
  mode: ProvisionerMode,
  provisionerName: string,
): boolean {
  if (value !== undefined && value !== 'auto' && value !== 'true' && value !== 'false') {
    throw new UsageError(`--publish-capacity must be true, false or auto, got ${JSON.stringify(value)}`);
  }
  if (value === 'true' && mode !== 'per-node') {
    throw new UsageError('--publish-capacity=true needs per-node mode: a shared root is on no one node');
  }
  if (value === 'true' || value === 'false') return value === 'true';
  return mode === 'per-node' && !provisionerName.includes('/');
}

/**
 * The named roots of `--root name=/path,name:label:label=/path`, or `undefined` for a bare path (read as
 * before). Named roots are per node only: a shared root is one directory every replica sees.
 */
function parseNamedRoots(value: string | undefined, mode: ProvisionerMode): readonly NamedRoot[] | undefined {
  if (value === undefined || value.startsWith('/') || !value.includes('=')) return undefined;
  if (mode !== 'per-node') throw new UsageError('named roots (--root name=/path) need per-node mode');
  const roots = value.split(',').map((entry): NamedRoot => {
    const [name = '', path = ''] = entry.trim().split('=', 2);
    if (!isAbsolute(path) || resolve(path) === '/') {
      throw new UsageError(
        `--root must be name=/path pairs separated by commas, each path absolute and not /, got ${JSON.stringify(entry)}`,
      );
    }
    const [rootName = '', ...labels] = name.trim().split(':');
    return { name: rootName, ...(labels.length === 0 ? {} : { labels }), path: resolve(path) };
  });
  try {
    checkRoots(roots);
  } catch (err) {
    throw new UsageError(`--root: ${(err as Error).message}`);
  }
  return roots;
}

/**
 * This node's roots from the node roots file at `path`, and the file as read. With it the roots come
 * from the file alone: a `--root` other than the default is refused rather than silently ignored.
 */
function readRootsConfig(
  path: string | undefined,
  rootFlag: string | undefined,
  mode: ProvisionerMode,
  nodeName: string,
) {
  if (path === undefined) return undefined;
  if (mode !== 'per-node')
    throw new UsageError('--roots-config needs per-node mode: it gives each node its roots');
  if (rootFlag !== undefined && rootFlag !== defaultRoot) {
    throw new UsageError(
      `--roots-config and --root ${rootFlag} both give this node's roots: pass one (HOSTPATH_ROOT set to the default ${defaultRoot} is ignored with --roots-config)`,
    );
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--roots-config: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const { entry, roots, retired } = rootsOfNode(parseNodeRootsConfig(text), nodeName);
    return { roots, retired, file: { path, text, entry } };
  } catch (err) {
    throw new UsageError(`--roots-config ${path}: ${(err as Error).message}`);
  }
}
