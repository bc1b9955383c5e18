/**
 * `pathPattern` templating as nfs-subdir defines it, plus `${.PV.name}` (nfs-subdir#149). The
 * render is only a proposal: {@link resolveVolumePath} validates it before anything touches a disk.
 */

import { parseRelativeVolumePath, type RelativeVolumePath } from './relative-volume-path.ts';

/** The claim fields a pattern can reference. */
export interface ClaimMetadata {
  readonly namespace: string;
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** Everything a pattern can reference. */
export interface PathPatternValues {
  readonly claim: ClaimMetadata;
  readonly pvName: string;
}

// Upstream's expression `\${\.PVC\.((labels|annotations)\.(.*?)|.*?)}`, with Go's `.` (anything but
// `\n`) spelled out because JavaScript's `.` also stops at `\r`, U+2028 and U+2029.
const placeholder = /\$\{\.PVC\.((labels|annotations)\.([^\n]*?)|[^\n]*?)\}|\$\{\.PV\.([^\n]*?)\}/gu;

function lookup(map: Readonly<Record<string, string>> | undefined, key: string): string {
  // Own properties only: `${.PVC.labels.constructor}` must not render `Object`'s source text. The
  // API only stores strings; anything else (a hand-built object) renders as a missing key would.
  const value: unknown = map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * Substitutes every placeholder in one pass; unknown placeholders and missing keys render as the
 * empty string (upstream parity). Unlike upstream's repeated `ReplaceAll`, substituted values are
 * never scanned again, so a label value cannot smuggle in another placeholder.
 */
export function renderPathPattern(pattern: string, values: PathPatternValues): string {
  const { claim, pvName } = values;
  return pattern.replace(
    placeholder,
    (
      _match,
      field: string | undefined,
      map: string | undefined,
      key: string | undefined,
      pvField?: string,
    ) => {
      if (pvField !== undefined) return pvField === 'name' ? pvName : '';
      if (map === 'labels') return lookup(claim.labels, key ?? '');
      if (map === 'annotations') return lookup(claim.annotations, key ?? '');
      if (field === 'namespace') return claim.namespace;
      if (field === 'name') return claim.name;
      return '';
    },
  );
}

/**
 * The volume path for a claim: `pattern` rendered and validated, or `fallback` (the caller's default
 * name, also validated) when there is no pattern or its render would resolve to the base itself
 * (empty, or only `/` and `.` segments, e.g. every placeholder missing).
 *
 * @throws {@link SafeFsError} `invalid-path` when the render (or the fallback) is not a valid
 * {@link RelativeVolumePath}; `..`, absolute or empty-segment renders are refused, never cleaned.
 */
export function resolveVolumePath(
  pattern: string | undefined,
  values: PathPatternValues,
  fallback: string,
): RelativeVolumePath {
  const rendered = pattern === undefined ? '' : renderPathPattern(pattern, values);
  const isBase = rendered.split('/').every((segment) => segment === '' || segment === '.');
  return parseRelativeVolumePath(isBase ? fallback : rendered);
}
