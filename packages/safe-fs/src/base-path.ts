/**
 * Absolute base directories (an NFS export path, a hostPath root) and the mapping between them and
 * relative volume paths, done by whole segments so `/export` never matches `/exports`.
 */

import { SafeFsError } from './errors.ts';
import { type RelativeVolumePath, relativePathProblem } from './relative-volume-path.ts';

function invalid(path: string, operation: string, detail: string): SafeFsError {
  return new SafeFsError({ kind: 'invalid-path', path, operation, detail });
}

/**
 * Normalises an absolute base path once, at start-up: runs of `/` collapse and a trailing `/` goes,
 * so `/`, `/export`, `/export/` and `/export//sub` become `/`, `/export`, `/export` and `/export/sub`.
 *
 * @throws {@link SafeFsError} `invalid-path` for a relative path, a `.` or `..` segment, or a NUL.
 */
export function normalizeBasePath(raw: string): string {
  const operation = 'normalize base path';
  if (!raw.startsWith('/')) throw invalid(raw, operation, 'it is not absolute');
  if (raw.includes('\u0000')) throw invalid(raw, operation, 'it contains a NUL character');
  const segments = raw.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    throw invalid(raw, operation, 'it has a "." or ".." segment');
  }
  return `/${segments.join('/')}`;
}

/** The absolute path of `path` under the normalised `base` (as written into a PV). */
export function joinBasePath(base: string, path: RelativeVolumePath): string {
  return base === '/' ? `/${path}` : `${base}/${path}`;
}

/**
 * The volume path of `absolute` (typically a PV's `spec.nfs.path` or `spec.hostPath.path`) relative to
 * the normalised `base`. The path is trusted no more than a rendered pattern: it must lie strictly
 * below `base` and its remainder must pass {@link parseRelativeVolumePath} unchanged, so
 * `/export/../etc`, `/export` itself and `/exports/x` are all refused.
 *
 * @throws {@link SafeFsError} `invalid-path` saying why.
 */
export function relativePathUnder(base: string, absolute: string): RelativeVolumePath {
  const operation = 'resolve path';
  // The PV comes from the API: a field the types call required may still be absent.
  if (typeof absolute !== 'string') throw invalid(String(absolute), operation, 'the volume has no path');
  const prefix = base === '/' ? '/' : `${base}/`;
  if (absolute === base || absolute === prefix)
    throw invalid(absolute, operation, `it is the base ${base} itself`);
  if (!absolute.startsWith(prefix)) throw invalid(absolute, operation, `it is not below ${base}`);
  const rest = absolute.slice(prefix.length);
  // A remainder starting with `/` came from `//` after the base; say so rather than "absolute".
  const problem = rest.startsWith('/') ? 'it has an empty segment' : relativePathProblem(rest);
  if (problem !== undefined) throw invalid(absolute, operation, problem);
  return rest as RelativeVolumePath;
}
