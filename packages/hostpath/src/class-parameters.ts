/**
 * StorageClass `parameters` of the hostpath provisioner. Every key is validated: a typo or a malformed
 * value must fail provisioning with a message that names the parameter and what it accepts, instead
 * of being silently ignored as upstream provisioners do.
 */
import { InfeasibleError } from '@kube-provisioner/controller';
import {
  isSnapshotBoundName,
  parseSnapshotBounds,
  snapshotBoundNames,
} from '@kube-provisioner/controller/snapshot';
import type { SpecialFilePolicy } from '@kube-provisioner/safe-fs';
import { rootNamePattern } from './root-placement.ts';

/** Kind of volume source written into the PV. */
export type VolumeType = 'hostPath' | 'local';

/** Parsed, validated StorageClass parameters. */
export interface ClassParameters {
  /** Volume source of the PV. Default `hostPath`. */
  readonly volumeType: VolumeType;
  /** Whether a claim may choose its volume type with {@link annVolumeType}. Default false. */
  readonly allowVolumeTypeAnnotation: boolean;
  /** Directory template relative to the root; `undefined` means `<pvName>`. */
  readonly pathPattern: string | undefined;
  /** Permission bits of every directory the provisioner creates. Default `0o777`, like upstream. */
  readonly mode: number;
  /** Owner set on created directories; `undefined` leaves the provisioner's own uid. */
  readonly uid: number | undefined;
  /** Group set on created directories; `undefined` leaves the provisioner's own gid. */
  readonly gid: number | undefined;
  /**
   * Whether each volume's size is enforced with a project quota (parameter `enforceSize`). Default
   * false: the size is recorded only.
   */
  readonly enforceSize: boolean;
  /** Hard limit above the request, in percent of it (`hardLimitGrace`, OpenEBS's name). Default 0. */
  readonly hardLimitGracePercent: number;
  /** Soft limit above the request, in percent of it (`softLimitGrace`); `undefined`: no soft limit. */
  readonly softLimitGracePercent: number | undefined;
  /**
   * How many files, directories and links an enforced volume may hold (`inodeLimit`). Default
   * `auto`: see {@link InodeLimit}.
   */
  readonly inodeLimit: InodeLimit;
  /**
   * What deleting a PV does with its directory (`onDelete`): `delete` (default) removes it, `retain`
   * keeps it for a later claim to take back.
   */
  readonly onDelete: DeletePolicy;
  /**
   * Namespaces besides the claim's own whose retained data a claim may take back
   * (`takeBackFromNamespaces`: a comma-separated list, or `*` for any). Default none.
   */
  readonly takeBackFromNamespaces: readonly string[] | '*';
  /**
   * What a clone does with FIFOs, sockets and device files of its source (`cloneSpecialFiles`):
   * `refuse` (default) fails the clone, `skip` leaves them out. Node.js cannot make them (no mknod).
   */
  readonly cloneSpecialFiles: SpecialFilePolicy;
  /**
   * The named roots of a per-node instance this class's volumes may go to (`roots`: a
   * comma-separated list of names); `undefined`: any root.
   */
  readonly roots: readonly string[] | undefined;
}

/**
 * The inode limit of an enforced volume: `auto` is one inode per 4 KiB of its hard block limit, at
 * least 10 000, so it grows with a resize; a number is that many whatever the size; `none` sets no
 * inode limit.
 */
export type InodeLimit = 'auto' | 'none' | number;

/** The least inode limit `auto` gives, however small the volume. */
export const minAutoInodeLimit = 10_000;

/** What deleting a PV does with its directory: remove it, or keep it for a take-back. */
export type DeletePolicy = 'delete' | 'retain';

/** PVC annotation choosing `hostPath` or `local`, honoured only when the class sets `allowVolumeTypeAnnotation`. */
export const annVolumeType = 'hostpath.kube-provisioner.io/volume-type';

/** Directory mode when the class sets none (the Go example's `0777`). */
export const defaultDirectoryMode = 0o777;

const volumeTypes: readonly VolumeType[] = ['hostPath', 'local'];
const booleans = ['true', 'false'] as const;
// Far above any file system's inode count, and still exact as a JavaScript number.
const maxInodeLimit = 999_999_999_999_999;
// Linux ids are 32-bit; 2^32-1 is the "no change" sentinel of chown(2), so it is not a valid owner.
const maxId = 0xffff_fffe;

type ParameterName =
  | 'volumeType'
  | 'allowVolumeTypeAnnotation'
  | 'pathPattern'
  | 'mode'
  | 'uid'
  | 'gid'
  | 'enforceSize'
  | 'softLimitGrace'
  | 'hardLimitGrace'
  | 'inodeLimit'
  | 'onDelete'
  | 'takeBackFromNamespaces'
  | 'cloneSpecialFiles'
  | 'roots';

/** What each parameter accepts, as shown in error messages. */
const accepted: Readonly<Record<ParameterName, string>> = {
  volumeType: volumeTypes.join(', '),
  allowVolumeTypeAnnotation: booleans.join(', '),
  pathPattern: 'a non-empty directory template relative to the root',
  mode: 'an octal mode of 3 or 4 digits, such as 0777, 0750 or 2770',
  uid: `a decimal user id from 0 to ${maxId}`,
  gid: `a decimal group id from 0 to ${maxId}`,
  enforceSize: booleans.join(', '),
  softLimitGrace: 'a percentage of the request from 0% to 1000%, such as 10%',
  hardLimitGrace: 'a percentage of the request from 0% to 1000%, such as 10%',
  inodeLimit: `auto, none, or a whole number of inodes from 1 to ${maxInodeLimit}, such as 100000`,
  onDelete: 'delete, retain',
  takeBackFromNamespaces: 'a comma-separated list of namespaces, or *',
  cloneSpecialFiles: 'refuse, skip',
  roots: 'a comma-separated list of root names (lower-case letters, digits and -), such as fast,bulk',
};

// The snapshot bounds (snapshotsPerClaim, snapshotRetention) are the snapshot taker's, which reads them itself.
const parameterNames = [...(Object.keys(accepted) as ParameterName[]), ...snapshotBoundNames];

function isParameterName(key: string): key is ParameterName {
  return Object.hasOwn(accepted, key);
}

/**
 * Parses and validates StorageClass parameters.
 *
 * @throws InfeasibleError listing every unknown key and malformed value, each with the accepted values.
 */
export function parseClassParameters(
  parameters: Readonly<Record<string, string>> | undefined,
): ClassParameters {
  const problems: string[] = [];
  const invalid = (name: ParameterName, value: string): void => {
    problems.push(
      `invalid value ${JSON.stringify(value)} for parameter "${name}": accepted values: ${accepted[name]}`,
    );
  };
  const result: {
    volumeType: VolumeType;
    allowVolumeTypeAnnotation: boolean;
    pathPattern: string | undefined;
    mode: number;
    uid: number | undefined;
    gid: number | undefined;
    enforceSize: boolean;
    hardLimitGracePercent: number;
    softLimitGracePercent: number | undefined;
    inodeLimit: InodeLimit;
    onDelete: DeletePolicy;
    takeBackFromNamespaces: readonly string[] | '*';
    cloneSpecialFiles: SpecialFilePolicy;
    roots: readonly string[] | undefined;
  } = {
    volumeType: 'hostPath',
    allowVolumeTypeAnnotation: false,
    pathPattern: undefined,
    mode: defaultDirectoryMode,
    uid: undefined,
    gid: undefined,
    enforceSize: false,
    hardLimitGracePercent: 0,
    softLimitGracePercent: undefined,
    inodeLimit: 'auto',
    onDelete: 'delete',
    takeBackFromNamespaces: [],
    cloneSpecialFiles: 'refuse',
    roots: undefined,
  };

  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (isSnapshotBoundName(key)) continue;
    if (!isParameterName(key)) {
      problems.push(`unknown parameter "${key}": accepted parameters: ${parameterNames.join(', ')}`);
      continue;
    }
    switch (key) {
      case 'volumeType': {
        const type = parseVolumeType(value);
        if (type === undefined) invalid(key, value);
        else result.volumeType = type;
        break;
      }
      case 'allowVolumeTypeAnnotation':
        if (value === 'true' || value === 'false') result.allowVolumeTypeAnnotation = value === 'true';
        else invalid(key, value);
        break;
      case 'pathPattern':
        if (value.trim() === '') invalid(key, value);
        else result.pathPattern = value;
        break;
      case 'mode':
        if (/^[0-7]{3,4}$/.test(value)) result.mode = Number.parseInt(value, 8);
        else invalid(key, value);
        break;
      case 'uid':
      case 'gid': {
        const id = parseId(value);
        if (id === undefined) invalid(key, value);
        else result[key] = id;
        break;
      }
      case 'enforceSize':
        if (value === 'true' || value === 'false') result.enforceSize = value === 'true';
        else invalid(key, value);
        break;
      case 'softLimitGrace':
      case 'hardLimitGrace': {
        const percent = parsePercent(value);
        if (percent === undefined) invalid(key, value);
        else if (key === 'softLimitGrace') result.softLimitGracePercent = percent;
        else result.hardLimitGracePercent = percent;
        break;
      }
      case 'inodeLimit': {
        const limit = parseInodeLimit(value);
        if (limit === undefined) invalid(key, value);
        else result.inodeLimit = limit;
        break;
      }
      case 'onDelete':
        if (value === 'delete' || value === 'retain') result.onDelete = value;
        else invalid(key, value);
        break;
      case 'takeBackFromNamespaces': {
        const namespaces = parseNamespaces(value);
        if (namespaces === undefined) invalid(key, value);
        else result.takeBackFromNamespaces = namespaces;
        break;
      }
      case 'cloneSpecialFiles':
        if (value === 'refuse' || value === 'skip') result.cloneSpecialFiles = value;
        else invalid(key, value);
        break;
      case 'roots': {
        const names = value.split(',').map((name) => name.trim());
        if (names.every((name) => rootNamePattern.test(name))) result.roots = [...new Set(names)];
        else invalid(key, value);
        break;
      }
    }
  }
  problems.push(...parseSnapshotBounds(parameters).problems);
  const limits = ['softLimitGrace', 'hardLimitGrace', 'inodeLimit'].filter(
    (key) => parameters?.[key] !== undefined,
  );
  if (limits.length > 0 && !result.enforceSize) {
    problems.push(`parameter ${limits.map((key) => `"${key}"`).join(' and ')} needs "enforceSize": "true"`);
  }
  if ((result.softLimitGracePercent ?? 0) > result.hardLimitGracePercent) {
    problems.push('parameter "softLimitGrace" must not be above "hardLimitGrace"');
  }

  if (problems.length > 0) {
    throw new InfeasibleError(`invalid StorageClass parameters: ${problems.join('; ')}`);
  }
  return result;
}

/**
 * The volume type of one claim: the claim's {@link annVolumeType} annotation when the class allows it,
 * else the class's `volumeType`.
 *
 * @throws InfeasibleError when the annotation is set but not allowed, or holds an unknown type.
 */
export function resolveVolumeType(
  parameters: ClassParameters,
  claimAnnotations: Readonly<Record<string, string>> | undefined,
): VolumeType {
  const requested = claimAnnotations?.[annVolumeType];
  if (requested === undefined) return parameters.volumeType;
  if (!parameters.allowVolumeTypeAnnotation) {
    throw new InfeasibleError(
      `annotation "${annVolumeType}" is not allowed by the StorageClass (parameter "allowVolumeTypeAnnotation" is not "true")`,
    );
  }
  const type = parseVolumeType(requested);
  if (type === undefined) {
    throw new InfeasibleError(
      `invalid value ${JSON.stringify(requested)} for annotation "${annVolumeType}": accepted values: ${accepted.volumeType}`,
    );
  }
  return type;
}

function parseVolumeType(value: string): VolumeType | undefined {
  return volumeTypes.find((type) => type === value);
}

function parsePercent(value: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,3})%$/.test(value)) return undefined;
  const percent = Number(value.slice(0, -1));
  return percent <= 1000 ? percent : undefined;
}

const namespaceName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;

/** `*`, or namespace names separated by commas (with optional spaces). */
function parseNamespaces(value: string): readonly string[] | '*' | undefined {
  if (value.trim() === '*') return '*';
  const names = value.split(',').map((name) => name.trim());
  return names.every((name) => namespaceName.test(name)) ? names : undefined;
}

function parseInodeLimit(value: string): InodeLimit | undefined {
  if (value === 'auto' || value === 'none') return value;
  if (!/^[1-9][0-9]{0,14}$/.test(value)) return undefined;
  return Number(value);
}

function parseId(value: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(value)) return undefined;
  const id = Number(value);
  return id <= maxId ? id : undefined;
}
