/**
 * The exports of an installation that serves several (`NFS_EXPORTS`): a JSON array a chart renders
 * with `toJson`, each export named so that a StorageClass can pick some. Validated whole at start-up,
 * so that every PV maps back to exactly one export.
 */
import { posix } from 'node:path';
import { normalizeBasePath } from '@kube-provisioner/safe-fs';
import { labelKeyProblem, labelValueProblem } from './label-selector.ts';
import { defaultMountRoot } from './nfs-provisioner.ts';

/**
 * One export of several: its name, server and exported path, where it is mounted here, and what a
 * class's placement and `exportSelector` read of it.
 */
export interface NfsExportConfig {
  /** What a StorageClass's `exports` parameter names; a DNS label. */
  readonly name: string;
  /** Written into the PVs placed on this export. */
  readonly server: string;
  /** The exported path on the server, normalised. */
  readonly path: string;
  /** Where it is mounted in this container; default `/persistentvolumes/<name>`. */
  readonly mountRoot: string;
  /** Its share under a class's `placement: weighted`: a positive integer; absent, 1. */
  readonly weight?: number;
  /** What a class's `exportSelector` matches; Kubernetes label syntax. Absent, none. */
  readonly labels?: Readonly<Record<string, string>>;
}

const exportName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;
const keys = new Set(['name', 'server', 'path', 'mountRoot', 'weight', 'labels']);

/**
 * Parses `NFS_EXPORTS`: a non-empty JSON array of `{"name", "server", "path", "mountRoot"?, "weight"?,
 * "labels"?}`. `weight` and `labels` are in the result only where the entry has them.
 *
 * @throws Error naming every problem: malformed JSON, unknown keys, a bad name, path, weight (not a
 * positive integer) or label (not Kubernetes label syntax, or not a string), two exports
 * with one name or mount point, or an export equal to or inside another of the same server (a PV's
 * path would then belong to both).
 */
export function parseExportList(text: string): NfsExportConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`NFS_EXPORTS is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new Error(
      'NFS_EXPORTS must be a non-empty JSON array of {"name", "server", "path", "mountRoot"?, "weight"?, "labels"?}',
    );
  }
  const problems: string[] = [];
  const exports = raw.flatMap((entry: unknown, index) => {
    const parsed = parseEntry(entry, `NFS_EXPORTS[${index}]`, problems);
    return parsed === undefined ? [] : [parsed];
  });
  if (problems.length === 0) problems.push(...overlaps(exports));
  if (problems.length > 0) throw new Error(problems.join('; '));
  return exports;
}

function parseEntry(entry: unknown, where: string, problems: string[]): NfsExportConfig | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    problems.push(`${where} must be an object`);
    return undefined;
  }
  const fields = entry as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(fields)) {
    if (!keys.has(key))
      problems.push(`${where}: unknown key ${JSON.stringify(key)} (accepted: ${[...keys].join(', ')})`);
  }
  const { name, server, path, mountRoot, weight, labels } = fields;
  if (typeof name !== 'string' || !exportName.test(name)) {
    problems.push(
      `${where}: "name" must be a DNS label (lower-case letters, digits and -), got ${JSON.stringify(name)}`,
    );
  }
  if (typeof server !== 'string' || server === '')
    problems.push(`${where}: "server" must be a non-empty string`);
  const exportPath = absolute(path, `${where}: "path"`, problems);
  const mount =
    mountRoot === undefined
      ? posix.join(defaultMountRoot, String(name))
      : absolute(mountRoot, `${where}: "mountRoot"`, problems);
  if (mount === '/') problems.push(`${where}: "mountRoot" must not be /`);
  if (weight !== undefined && !(Number.isSafeInteger(weight) && (weight as number) > 0)) {
    problems.push(`${where}: "weight" must be a positive integer, got ${JSON.stringify(weight)}`);
  }
  const labelMap = labels === undefined ? undefined : labelsOf(labels, `${where}: "labels"`, problems);
  if (problems.length > before) return undefined;
  return {
    name: name as string,
    server: server as string,
    path: exportPath as string,
    mountRoot: mount as string,
    ...(weight === undefined ? {} : { weight: weight as number }),
    ...(labelMap === undefined ? {} : { labels: labelMap }),
  };
}

/** `value` as a label map when it is an object of label keys to label values; else the problems are added. */
function labelsOf(value: unknown, what: string, problems: string[]): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${what} must be an object of label keys to string values`);
    return undefined;
  }
  const before = problems.length;
  for (const [key, text] of Object.entries(value)) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) problems.push(`${what}: ${keyProblem}`);
    if (typeof text !== 'string') {
      problems.push(
        `${what}: the value of ${JSON.stringify(key)} must be a string, got ${JSON.stringify(text)}`,
      );
      continue;
    }
    const valueProblem = labelValueProblem(text);
    if (valueProblem !== undefined) problems.push(`${what}: ${valueProblem}`);
  }
  return problems.length > before ? undefined : { ...(value as Record<string, string>) };
}

function absolute(value: unknown, what: string, problems: string[]): string | undefined {
  if (typeof value === 'string' && posix.isAbsolute(value)) {
    try {
      return normalizeBasePath(value);
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`);
      return undefined;
    }
  }
  problems.push(`${what} must be an absolute path, got ${JSON.stringify(value)}`);
  return undefined;
}

/** Pairs of exports that share a name, a mount point, or (on one server) a path or its ancestry. */
function overlaps(exports: readonly NfsExportConfig[]): string[] {
  const problems: string[] = [];
  exports.forEach((a, i) => {
    for (const b of exports.slice(i + 1)) {
      const pair = `exports ${JSON.stringify(a.name)} and ${JSON.stringify(b.name)}`;
      if (a.name === b.name) problems.push(`${pair}: two exports have one name`);
      if (within(a.mountRoot, b.mountRoot) || within(b.mountRoot, a.mountRoot)) {
        problems.push(
          `${pair}: one mount point is ${a.mountRoot === b.mountRoot ? 'the other' : 'inside the other'}`,
        );
      }
      if (a.server === b.server && (within(a.path, b.path) || within(b.path, a.path))) {
        problems.push(`${pair}: one path of server ${a.server} is the other or inside it`);
      }
    }
  });
  return problems;
}

/** Whether normalised `inner` is `outer` or below it. */
function within(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(outer === '/' ? '/' : `${outer}/`);
}
