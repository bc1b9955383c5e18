/**
 * The StorageClass parameters `gidMin` and `gidMax` as the Go library's `gidallocator` reads them:
 * keys in any case, decimal 32-bit values, defaults 2000 and 2147483647, both within those bounds.
 */

/** PV annotation holding the supplemental group of the volume; kubelet adds it to the pod's groups. */
export const annVolumeGid = 'pv.beta.kubernetes.io/gid';

/** Lowest GID handed out, and the lowest a class may ask for (below it are system and user groups). */
export const defaultGidMin = 2000;
/** Highest GID handed out, and the highest a class may ask for (2³¹ − 1). */
export const defaultGidMax = 2_147_483_647;

/** An inclusive range of GIDs. */
export interface GidRange {
  readonly min: number;
  readonly max: number;
}

/** A `gidMin`/`gidMax` parameter that cannot be used; the message names the parameter and what is accepted. */
export class GidParameterError extends Error {
  override readonly name = 'GidParameterError';
}

type GidParameter = 'gidMin' | 'gidMax';

function parameterOf(key: string): GidParameter | undefined {
  const lower = key.toLowerCase();
  if (lower === 'gidmin') return 'gidMin';
  if (lower === 'gidmax') return 'gidMax';
  return undefined;
}

/** Whether `key` is `gidMin` or `gidMax` in any case, as the Go library matches them. */
export function isGidParameter(key: string): boolean {
  return parameterOf(key) !== undefined;
}

/** Whether the class sets `gidMin` or `gidMax` (any case): what turns allocation on for a provisioner that makes it optional. */
export function hasGidParameters(parameters: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(parameters ?? {}).some(isGidParameter);
}

/**
 * A GID as the Go library parses one: decimal, an optional sign, within 32 bits, not negative.
 * `undefined` when it is none.
 */
export function parseGid(value: string): number | undefined {
  if (!/^[+-]?[0-9]+$/u.test(value)) return undefined;
  const gid = Number(value);
  return gid >= 0 && gid <= defaultGidMax ? gid : undefined;
}

/**
 * The range a class asks for: its `gidMin` and `gidMax` (keys in any case), the defaults for those
 * it leaves out. Other parameters are ignored.
 *
 * @throws GidParameterError when a value is not a decimal GID, lies outside [2000, 2147483647], or
 *   `gidMin` exceeds `gidMax`.
 */
export function parseGidRange(parameters: Readonly<Record<string, string>> | undefined): GidRange {
  const range = { gidMin: defaultGidMin, gidMax: defaultGidMax };
  for (const [key, value] of Object.entries(parameters ?? {})) {
    const parameter = parameterOf(key);
    if (parameter === undefined) continue;
    const gid = parseGid(value);
    if (gid === undefined || gid < defaultGidMin) {
      throw new GidParameterError(
        `invalid value ${JSON.stringify(value)} for parameter "${key}": a GID from ${defaultGidMin} to ${defaultGidMax}`,
      );
    }
    range[parameter] = gid;
  }
  if (range.gidMin > range.gidMax) {
    throw new GidParameterError(`gidMin ${range.gidMin} is greater than gidMax ${range.gidMax}`);
  }
  return { min: range.gidMin, max: range.gidMax };
}
