/**
 * The exports of an installation that serves several (`NFS_EXPORTS`): a JSON array a chart renders
 * with `toJson`, each export named so that a StorageClass can pick some. Validated whole at start-up,
 * so that every PV maps back to exactly one export.
 */
import { posix } from 'node:path';
import { normalizeBasePath } from '@kube-provisioner/safe-fs';
import { defaultMountRoot } from './nfs-provisioner.ts';

/** One export of several: its name, server and exported path, and where it is mounted here. */
export interface NfsExportConfig {
  /** What a StorageClass's `exports` parameter names; a DNS label. */
  readonly name: string;
  /** Written into the PVs placed on this export. */
  readonly server: string;
  /** The exported path on the server, normalised. */
  readonly path: string;
  /** Where it is mounted in this container; default `/persistentvolumes/<name>`. */
  readonly mountRoot: string;
}

const exportName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;
const keys = new Set(['name', 'server', 'path', 'mountRoot']);

/**
 * Parses `NFS_EXPORTS`: a non-empty JSON array of `{"name", "server", "path", "mountRoot"?}`.
 *
 * @throws Error naming every problem: malformed JSON, unknown keys, a bad name or path, two exports
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
    throw new Error('NFS_EXPORTS must be a non-empty JSON array of {"name", "server", "path", "mountRoot"?}');
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
  const { name, server, path, mountRoot } = fields;
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
  if (problems.length > before) return undefined;
  return {
    name: name as string,
    server: server as string,
    path: exportPath as string,
    mountRoot: mount as string,
  };
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
