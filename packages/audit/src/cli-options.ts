/**
 * Command line of `kube-provisioner-audit`. Flags fall back to the environment variables the
 * provisioners themselves read (`PROVISIONER_NAME`, `NFS_PATH`, `NFS_SERVER`), so the audit can run
 * beside a provisioner with the same configuration.
 */
import {
  type Environment,
  type FlagSpecs,
  parseFlags,
  parseGoDuration,
  UsageError,
  usageText,
} from '@kube-provisioner/controller/cli';
import { normalizeBasePath } from '@kube-provisioner/safe-fs';
import { defaultGraceMs } from './audit.ts';
import type { OutputFormat } from './report-format.ts';
import { type ProvisionerKind, provisionerKinds, type VolumeLayout } from './volume-layout.ts';

/** Name in messages and help. */
export const program = 'kube-provisioner-audit';

/** Validated command line. */
export interface AuditCliOptions {
  /** `undefined`: in-cluster credentials. */
  readonly kubeconfig: string | undefined;
  readonly provisionerName: string;
  readonly root: string;
  readonly layout: VolumeLayout;
  readonly graceMs: number;
  readonly maxDepth: number;
  readonly output: OutputFormat;
  /**
   * `--quota-projects`: read the project IDs of the root's file system with `xfs_quota`, so quota
   * projects no volume's record holds are reported.
   */
  readonly quotaProjects: boolean;
  /** `--help`: print the help and exit 0. */
  readonly help: boolean;
  /** `--version`: print the version and exit 0. */
  readonly version: boolean;
}

const flags = {
  kubeconfig: { env: 'KUBECONFIG', description: 'kubeconfig file; in-cluster credentials when unset' },
  'provisioner-name': {
    env: 'PROVISIONER_NAME',
    description: 'the provisioner to audit, as in StorageClass.provisioner (required)',
  },
  kind: {
    description: `its kind, which decides where PVs keep their data: ${provisionerKinds.join(', ')} (required)`,
  },
  root: {
    description: 'the NFS export or host root as mounted where the audit runs (required; read only)',
  },
  'nfs-path': {
    env: 'NFS_PATH',
    description: 'nfs kinds: the exported path PVs name (spec.nfs.path is below it; required)',
  },
  'nfs-server': {
    env: 'NFS_SERVER',
    description: 'nfs kinds: only PVs on this server have their directory under the root; any when unset',
  },
  'host-root': {
    description:
      'hostpath: the provisioner --root written into PVs, when mounted elsewhere here (default: --root)',
  },
  node: {
    description: 'hostpath per-node mode: audit only the PVs of this node (its root holds only those)',
  },
  grace: {
    default: `${defaultGraceMs / 60_000}m`,
    description:
      'how long a PV may stay deleted with the finalizer, Released with policy Delete, or a temporary file may exist before it is a finding (Go duration; 0s reports all)',
  },
  'max-depth': {
    default: '4',
    description: 'how deep to look for volumes in directories that are not marked as created parents',
  },
  output: { default: 'table', description: 'table or json' },
  'quota-projects': {
    boolean: true,
    default: 'false',
    description:
      "hostpath: also report quota projects no volume holds, read with xfs_quota from the root's XFS or ext4 mounted with prjquota (needs root)",
  },
} satisfies FlagSpecs;

/** Help text. */
export function usage(): string {
  return usageText(program, flags);
}

/** Parses the command line. @throws UsageError naming the flag at fault. */
export function parseAuditCliOptions(argv: readonly string[], env: Environment): AuditCliOptions {
  const parsed = parseFlags(flags, argv, env);
  // Help and version need none of the required settings.
  const help = parsed.help || parsed.version;
  const kind = help ? 'hostpath' : parsed.required('kind');
  if (!help && !provisionerKinds.includes(kind as ProvisionerKind)) {
    throw new UsageError(`--kind must be one of ${provisionerKinds.join(', ')}, got ${JSON.stringify(kind)}`);
  }
  const output = parsed.string('output');
  if (output !== 'table' && output !== 'json') {
    throw new UsageError(`--output must be table or json, got ${JSON.stringify(output)}`);
  }
  const grace = parsed.string('grace') ?? '';
  const graceMs = parseGoDuration(grace);
  if (graceMs === undefined) {
    throw new UsageError(`--grace must be a Go duration such as 5m or 0s, got ${JSON.stringify(grace)}`);
  }
  const root = help ? '' : parsed.directory('root');
  const quotaProjects = parsed.goBoolean('quota-projects');
  if (quotaProjects && !help && kind !== 'hostpath') {
    throw new UsageError('--quota-projects applies to --kind hostpath only');
  }
  return {
    kubeconfig: parsed.string('kubeconfig'),
    provisionerName: help ? '' : parsed.required('provisioner-name'),
    root,
    layout: help ? { kind: 'hostpath', hostRoot: '/' } : layoutOf(kind as ProvisionerKind, parsed, root),
    graceMs,
    maxDepth: parsed.integer('max-depth', 0, 64),
    output,
    quotaProjects,
    help: parsed.help,
    version: parsed.version,
  };
}

type Parsed = ReturnType<typeof parseFlags<keyof typeof flags>>;

function layoutOf(kind: ProvisionerKind, parsed: Parsed, root: string): VolumeLayout {
  const basePath = (name: 'nfs-path' | 'host-root', value: string): string => {
    try {
      return normalizeBasePath(value);
    } catch {
      throw new UsageError(`--${name} must be an absolute path, got ${JSON.stringify(value)}`);
    }
  };
  // Neither has an environment fallback, so a value means the flag was given.
  const refuse = (name: 'host-root' | 'node'): void => {
    if (parsed.string(name) !== undefined) throw new UsageError(`--${name} applies to --kind hostpath only`);
  };
  if (kind === 'hostpath') {
    return {
      kind: 'hostpath',
      hostRoot: basePath('host-root', parsed.string('host-root') ?? root),
      node: parsed.string('node'),
    };
  }
  refuse('host-root');
  refuse('node');
  return {
    kind: 'nfs',
    exportPath: basePath('nfs-path', parsed.required('nfs-path')),
    server: parsed.string('nfs-server'),
  };
}
