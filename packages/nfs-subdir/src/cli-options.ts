/**
 * Command line of `nfs-client-provisioner` and `nfs-subdir-provisioner`: upstream's environment
 * variables, each also available as a flag (a flag wins; an empty variable counts as unset).
 */
import { isAbsolute } from 'node:path';
import {
  type Environment,
  type FlagSpecs,
  type ParsedFlags,
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
import { type NfsExportConfig, parseExportList } from './export-list.ts';
import { defaultMountRoot } from './nfs-provisioner.ts';

export { UsageError } from '@kube-provisioner/controller/cli';

/**
 * Validated start-up configuration: one export (`NFS_SERVER`, `NFS_PATH`, as upstream), or several
 * (`NFS_EXPORTS`).
 */
export type NfsCliOptions = NfsCommonCliOptions & (NfsSingleExportOptions | NfsSeveralExportsOptions);

/** The export of the single-export form, upstream's. */
export interface NfsSingleExportOptions {
  readonly exports?: undefined;
  readonly server: string;
  readonly exportPath: string;
  readonly mountRoot: string;
}

/** The exports of an installation serving several (`NFS_EXPORTS`). */
export interface NfsSeveralExportsOptions {
  readonly exports: readonly NfsExportConfig[];
}

/** Settings of both forms. */
export interface NfsCommonCliOptions extends ProvisionerCliOptions, UsageCliOptions {
  readonly provisionerName: string;
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
  'nfs-exports': {
    env: 'NFS_EXPORTS',
    description:
      'several exports instead of NFS_SERVER/NFS_PATH: a JSON array of {"name", "server", "path", "mountRoot"?, "weight"?, "labels"?} (mountRoot default /persistentvolumes/<name>, weight 1)',
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
  // Upstream's checks first, in upstream's order: NFS_SERVER, NFS_PATH, PROVISIONER_NAME.
  const served = exportOptions(parsed);
  return {
    ...served,
    provisionerName: parsed.required('provisioner-name'),
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

/** The exports: `NFS_EXPORTS`, else upstream's single export. */
function exportOptions(
  parsed: ParsedFlags<keyof typeof flags>,
): NfsSingleExportOptions | NfsSeveralExportsOptions {
  const several = parsed.string('nfs-exports');
  if (several === undefined) return singleExport(parsed);
  if (parsed.string('nfs-server') !== undefined || parsed.string('nfs-path') !== undefined) {
    throw new UsageError('NFS_EXPORTS replaces NFS_SERVER and NFS_PATH: set either, not both');
  }
  try {
    return { exports: parseExportList(several) };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Upstream's single export: `NFS_SERVER`, `NFS_PATH` and the mount root. */
function singleExport(parsed: ParsedFlags<keyof typeof flags>): NfsSingleExportOptions {
  const server = parsed.required('nfs-server');
  const exportPath = parsed.required('nfs-path');
  if (!parsed.help && !isAbsolute(exportPath)) {
    throw new UsageError(`NFS_PATH must be an absolute path, got ${JSON.stringify(exportPath)}`);
  }
  return { server, exportPath, mountRoot: parsed.directory('mount-root') };
}
