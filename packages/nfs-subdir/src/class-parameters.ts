/**
 * StorageClass `parameters` of the NFS provisioners, per dialect. At provision time every key and
 * value is validated, so a typo fails with a `ProvisioningFailed` event naming what is accepted
 * instead of being ignored or silently archiving. PVs made by the upstream programs carry no
 * recorded policy; for them {@link legacyDeletePolicy} reads the class exactly as upstream did.
 */
import { InfeasibleError } from '@kube-provisioner/controller';
import { goBooleanSpellings, parseGoBoolean, parseGoDuration } from '@kube-provisioner/controller/cli';
import { type GidRange, parseGidRange } from '@kube-provisioner/controller/gid-allocator';
import {
  parseSnapshotBounds,
  type SnapshotBoundName,
  snapshotBoundNames,
} from '@kube-provisioner/controller/snapshot';
import type { SpecialFilePolicy } from '@kube-provisioner/safe-fs';
import { type DeletePolicy, deletePolicies, parseDeletePolicy } from './delete-policy.ts';

/**
 * Which upstream program is reproduced: `nfs-client` (external-storage's nfs-client-provisioner:
 * `archiveOnDelete` only, directory `<ns>-<pvc>-<pv>`) or `nfs-subdir` (adds `onDelete`, `pathPattern`).
 */
export type NfsDialect = 'nfs-client' | 'nfs-subdir';

/** Parsed, validated StorageClass parameters. */
export interface ClassParameters {
  /** What Delete does; recorded on the PV. */
  readonly onDelete: DeletePolicy;
  /** Directory template (nfs-subdir only); `undefined` means `<ns>-<pvc>-<pv>`. */
  readonly pathPattern: string | undefined;
  /**
   * Take over an existing directory of the claim's own namespace: unrecorded data below it, or a
   * directory kept by `onDelete: retain` for a claim of that namespace (nfs-subdir only). Default false.
   */
  readonly adoptExisting: boolean;
  /**
   * With `adoptExisting`, let a flat pattern (`${.PVC.namespace}-…`, no `/`) adopt unrecorded data
   * named `<namespace>-…`. The prefix is ambiguous: namespace `a` with claim `b-c` renders what
   * namespace `a-b` with claim `c` does, so a claim may take over another namespace's data. Default false.
   */
  readonly adoptAmbiguousNamespacePrefix: boolean;
  /** How long archives of the class's volumes are kept, in ms (`archiveRetention`); `undefined`: the CLI default. */
  readonly archiveRetentionMs: number | undefined;
  /** `archiveRetention` as written (a Go duration), recorded on the PV. */
  readonly archiveRetention: string | undefined;
  /**
   * Namespaces besides the claim's own whose archived or retained data a claim may take back
   * (`takeBackFromNamespaces`: a comma-separated list, or `*` for any). Default none.
   */
  readonly takeBackFromNamespaces: readonly string[] | '*';
  /**
   * What a clone does with FIFOs, sockets and device files of its source (`cloneSpecialFiles`):
   * `refuse` (default) fails the clone, `skip` leaves them out. Node.js cannot make them (no mknod).
   */
  readonly cloneSpecialFiles: SpecialFilePolicy;
  /**
   * The range each volume's supplemental GID comes from (`gidMin`/`gidMax`, keys in any case, as the
   * Go library's `gidallocator`; nfs-subdir only). Either one turns allocation on, the other taking
   * its default (2000, 2147483647); `undefined`, the default: no GID, as upstream.
   */
  readonly gidRange: GidRange | undefined;
}

// The snapshot bounds are the snapshot taker's, which reads them itself; like archiveRetention,
// upstream knows neither, and both dialects accept them.
type ParameterName =
  | SnapshotBoundName
  | 'onDelete'
  | 'archiveOnDelete'
  | 'pathPattern'
  | 'adoptExisting'
  | 'adoptAmbiguousNamespacePrefix'
  | 'archiveRetention'
  | 'takeBackFromNamespaces'
  | 'cloneSpecialFiles'
  | 'gidMin'
  | 'gidMax';

// Any pathPattern is accepted here; its renders are validated per claim.
// gidMin and gidMax are validated together, by the controller's GID range parser.
type CheckedParameter = Exclude<ParameterName, SnapshotBoundName | 'pathPattern' | 'gidMin' | 'gidMax'>;

const accepted: Readonly<Record<CheckedParameter, string>> = {
  onDelete: deletePolicies.join(', '),
  archiveOnDelete: goBooleanSpellings,
  adoptExisting: 'true, false',
  adoptAmbiguousNamespacePrefix: 'true, false',
  archiveRetention: 'a positive Go duration such as 720h',
  takeBackFromNamespaces: 'a comma-separated list of namespaces, or *',
  cloneSpecialFiles: 'refuse, skip',
};

const parametersOf: Readonly<Record<NfsDialect, readonly ParameterName[]>> = {
  'nfs-client': [
    'archiveOnDelete',
    'archiveRetention',
    'takeBackFromNamespaces',
    'cloneSpecialFiles',
    ...snapshotBoundNames,
  ],
  'nfs-subdir': [
    'onDelete',
    'archiveOnDelete',
    'pathPattern',
    'adoptExisting',
    'adoptAmbiguousNamespacePrefix',
    'archiveRetention',
    'takeBackFromNamespaces',
    'cloneSpecialFiles',
    'gidMin',
    'gidMax',
    ...snapshotBoundNames,
  ],
};

/**
 * Parses and validates `parameters` for `dialect`. `onDelete`, when set, decides; otherwise
 * `archiveOnDelete` does (absent or true: archive; false: delete), as upstream.
 *
 * @throws InfeasibleError listing every unknown key and malformed value with what is accepted.
 */
export function parseClassParameters(
  dialect: NfsDialect,
  parameters: Readonly<Record<string, string>> | undefined,
): ClassParameters {
  const known = parametersOf[dialect];
  const problems: string[] = [];
  let onDelete: DeletePolicy | undefined;
  let archive = true;
  let pathPattern: string | undefined;
  const flags = { adoptExisting: false, adoptAmbiguousNamespacePrefix: false };
  let archiveRetention: string | undefined;
  let archiveRetentionMs: number | undefined;
  let takeBackFromNamespaces: readonly string[] | '*' = [];
  let cloneSpecialFiles: SpecialFilePolicy = 'refuse';
  const gidParameters: Record<string, string> = {};
  for (const [key, value] of Object.entries(parameters ?? {})) {
    const name = known.find((candidate) => candidate === key) ?? gidParameterOf(known, key);
    const invalid = (parameter: CheckedParameter): void => {
      problems.push(
        `invalid value ${JSON.stringify(value)} for parameter "${parameter}": accepted values: ${accepted[parameter]}`,
      );
    };
    switch (name) {
      case undefined:
        problems.push(`unknown parameter ${JSON.stringify(key)}: accepted parameters: ${known.join(', ')}`);
        break;
      case 'onDelete':
        onDelete = parseDeletePolicy(value);
        if (onDelete === undefined) invalid(name);
        break;
      case 'archiveOnDelete': {
        const parsed = parseGoBoolean(value);
        if (parsed === undefined) invalid(name);
        else archive = parsed;
        break;
      }
      case 'pathPattern':
        pathPattern = patternOf(value);
        break;
      case 'archiveRetention': {
        const ms = parseGoDuration(value);
        if (ms === undefined || ms <= 0) invalid(name);
        else [archiveRetention, archiveRetentionMs] = [value, ms];
        break;
      }
      case 'takeBackFromNamespaces': {
        const parsed = parseNamespaceList(value);
        if (parsed === undefined) invalid(name);
        else takeBackFromNamespaces = parsed;
        break;
      }
      case 'cloneSpecialFiles':
        if (value === 'refuse' || value === 'skip') cloneSpecialFiles = value;
        else invalid(name);
        break;
      case 'gidMin':
      case 'gidMax':
        gidParameters[key] = value;
        break;
      case 'snapshotsPerClaim':
      case 'snapshotRetention':
        break;
      case 'adoptExisting':
      case 'adoptAmbiguousNamespacePrefix':
        if (value === 'true' || value === 'false') flags[name] = value === 'true';
        else invalid(name);
        break;
    }
  }
  const gidRange = gidRangeOf(gidParameters, problems);
  problems.push(...parseSnapshotBounds(parameters).problems);
  if (problems.length > 0) {
    throw new InfeasibleError(`invalid StorageClass parameters: ${problems.join('; ')}`);
  }
  return {
    onDelete: onDelete ?? (archive ? 'archive' : 'delete'),
    pathPattern,
    ...flags,
    archiveRetention,
    archiveRetentionMs,
    takeBackFromNamespaces,
    cloneSpecialFiles,
    gidRange,
  };
}

/** `gidMin` or `gidMax` when `key` is one in any case (the Go library's matching) and `known` holds it. */
function gidParameterOf(known: readonly ParameterName[], key: string): ParameterName | undefined {
  const lower = key.toLowerCase();
  return known.find((name) => (name === 'gidMin' || name === 'gidMax') && name.toLowerCase() === lower);
}

/** The GID range `gidParameters` ask for; `undefined` when they are none, or bad (the problem is added). */
function gidRangeOf(
  gidParameters: Readonly<Record<string, string>>,
  problems: string[],
): GidRange | undefined {
  if (Object.keys(gidParameters).length === 0) return undefined;
  try {
    return parseGidRange(gidParameters);
  } catch (err) {
    problems.push((err as Error).message);
    return undefined;
  }
}

const namespaceName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;

/** `*`, or a comma-separated list of namespace names (spaces around commas allowed); `undefined` when malformed. */
function parseNamespaceList(value: string): readonly string[] | '*' | undefined {
  if (value.trim() === '*') return '*';
  const names = value.split(',').map((name) => name.trim());
  return names.every((name) => namespaceName.test(name)) ? names : undefined;
}

/**
 * The pattern to render: slashes at either end of the template itself are dropped (upstream joined
 * and cleaned the result, so `/${.PVC.name}/` worked there); an empty template means the default name.
 * Substituted values are never cleaned: they are validated as rendered.
 */
function patternOf(value: string): string | undefined {
  const trimmed = value.replace(/^\/+|\/+$/gu, '');
  return trimmed === '' ? undefined : trimmed;
}

/** Result of {@link legacyDeletePolicy}; `problem` says why a value was not understood. */
export interface LegacyDeletePolicy {
  readonly policy: DeletePolicy;
  readonly problem?: string;
}

/**
 * The policy upstream would apply to a PV it made, read from the live class parameters: nfs-subdir
 * honours `onDelete` only when it is exactly `delete` or `retain`, then both dialects read
 * `archiveOnDelete` (absent: archive). Upstream failed every Delete on an unparsable
 * `archiveOnDelete`; here it archives, the data-preserving outcome, and reports the problem.
 */
export function legacyDeletePolicy(
  dialect: NfsDialect,
  parameters: Readonly<Record<string, string>> | undefined,
): LegacyDeletePolicy {
  const onDelete = parameters?.onDelete;
  if (dialect === 'nfs-subdir' && (onDelete === 'delete' || onDelete === 'retain')) {
    return { policy: onDelete };
  }
  const raw = parameters?.archiveOnDelete;
  if (raw === undefined) return { policy: 'archive' };
  const archive = parseGoBoolean(raw);
  if (archive === undefined) {
    return {
      policy: 'archive',
      problem: `invalid archiveOnDelete ${JSON.stringify(raw)} (accepted values: ${goBooleanSpellings})`,
    };
  }
  return { policy: archive ? 'archive' : 'delete' };
}
