/**
 * Command line of `nfs-client-provisioner` and `nfs-subdir-provisioner`: upstream's environment
 * variables, each also available as a flag (a flag wins; an empty variable counts as unset).
 */
import { isAbsolute } from 'node:path';
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
import { defaultMountRoot } from './nfs-provisioner.ts';

export { UsageError } from '@kube-provisioner/controller/cli';

/** Validated start-up configuration. */
export interface NfsCliOptions extends ProvisionerCliOptions, UsageCliOptions {
  readonly server: string;
  readonly exportPath: string;
  readonly provisionerName: string;
  readonly mountRoot: string;
  readonly leaderElection: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Port of `/metrics`, `/healthz` and `/readyz`; 0 disables the server. */
  readonly metricsPort: number;
  /** Delete nested volumes of the upstream programs when their class says so (default: archive them). */
  readonly deleteUnrecordedNested: boolean;
  /** How long archives of PVs recording no `archiveRetention` are kept, in ms; `undefined`: forever. */
  readonly archiveRetentionMs: number | undefined;
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
  'leader-election': {
    env: 'ENABLE_LEADER_ELECTION',
    default: 'true',
    description: 'elect one active replica with a Lease (--no-leader-election or a Go boolean to turn off)',
    boolean: true,
  },
  'leader-election-lease-duration': { default: '15s', description: 'Lease duration (Go duration)' },
  'leader-election-renew-deadline': { default: '10s', description: 'renew deadline of the leader' },
  'leader-election-retry-period': { default: '2s', description: 'retry period of the candidates' },
  'metrics-port': {
    env: 'METRICS_PORT',
    default: '8080',
    description: 'port of /metrics, /healthz and /readyz; 0 = off',
  },
  'delete-unrecorded-nested': {
    env: 'DELETE_UNRECORDED_NESTED',
    default: 'false',
    description: 'delete, not archive, nested upstream volumes whose class says delete (Go boolean)',
  },
  'archive-retention': {
    env: 'ARCHIVE_RETENTION',
    description:
      'how long archives are kept when their class sets no archiveRetention (Go duration, e.g. 720h; default: forever)',
  },
  // Every call is a round trip to the server: a tenth of hostpath's default rate.
  ...usageFlags(50),
  ...provisionerFlags,
} satisfies FlagSpecs;

/** Help text listing every flag with its environment variable and default. */
export function usage(program: string): string {
  return usageText(program, flags);
}

/**
 * Parses flags, falling back to environment variables, then to defaults.
 *
 * @throws UsageError for unknown flags, malformed values or missing required settings.
 */
export function parseCliOptions(argv: readonly string[], env: Environment): NfsCliOptions {
  const parsed = parseFlags(flags, argv, env);
  const server = parsed.required('nfs-server');
  const exportPath = parsed.required('nfs-path');
  if (!parsed.help && !isAbsolute(exportPath)) {
    throw new UsageError(`NFS_PATH must be an absolute path, got ${JSON.stringify(exportPath)}`);
  }
  const mountRoot = parsed.directory('mount-root');
  return {
    server,
    exportPath,
    provisionerName: parsed.required('provisioner-name'),
    mountRoot,
    leaderElection: parsed.goBoolean('leader-election'),
    leaseDurationMs: parsed.goDuration('leader-election-lease-duration'),
    renewDeadlineMs: parsed.goDuration('leader-election-renew-deadline'),
    retryPeriodMs: parsed.goDuration('leader-election-retry-period'),
    metricsPort: parsed.integer('metrics-port', 0, 65535),
    deleteUnrecordedNested: parsed.goBoolean('delete-unrecorded-nested'),
    archiveRetentionMs:
      parsed.string('archive-retention') === undefined ? undefined : parsed.goDuration('archive-retention'),
    ...readUsageFlags(parsed),
    ...readProvisionerFlags(parsed),
  };
}
