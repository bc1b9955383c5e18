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

const claimPrefix = '${.PVC.';
const volumePrefix = '${.PV.';

function lookup(map: Readonly<Record<string, string>> | undefined, key: string): string {
  // Own properties only: `${.PVC.labels.constructor}` must not render `Object`'s source text. The
  // API only stores strings; anything else (a hand-built object) renders as a missing key would.
  const value: unknown = map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
  return typeof value === 'string' ? value : '';
}

/** What placeholder body `body` of `prefix` renders to. */
function substitute(prefix: string, body: string, values: PathPatternValues): string {
  const { claim, pvName } = values;
  if (prefix === volumePrefix) return body === 'name' ? pvName : '';
  if (body.startsWith('labels.')) return lookup(claim.labels, body.slice('labels.'.length));
  if (body.startsWith('annotations.')) return lookup(claim.annotations, body.slice('annotations.'.length));
  if (body === 'namespace') return claim.namespace;
  if (body === 'name') return claim.name;
  return '';
}

/**
 * Substitutes every placeholder in one pass; unknown placeholders and missing keys render as the
 * empty string (upstream parity). Unlike upstream's repeated `ReplaceAll`, substituted values are
 * never scanned again, so a label value cannot smuggle in another placeholder.
 *
 * Upstream's expression, `\${\.PVC\.((labels|annotations)\.(.*?)|.*?)}` (and ours for `${.PV.…}`),
 * matches from a prefix to the first `}` on the same line. A regular expression finds that by
 * scanning on from every unclosed prefix, quadratic in their number (40 000 of them blocked the event
 * loop for 9 s); this scan never looks at a character twice.
 */
export function renderPathPattern(pattern: string, values: PathPatternValues): string {
  // The next `}` and line break at or after a position, found once: positions only grow, so every
  // search starts past the previous one's result.
  let close = -2;
  let newline = -2;
  const seek = (cached: number, text: string, from: number): number =>
    cached === -1 || cached >= from ? cached : pattern.indexOf(text, from);
  let rendered = '';
  let from = 0;
  let at = pattern.indexOf('${.PV', from);
  while (at >= 0) {
    const prefix = [claimPrefix, volumePrefix].find((candidate) => pattern.startsWith(candidate, at));
    if (prefix === undefined) {
      at = pattern.indexOf('${.PV', at + 1);
      continue;
    }
    const body = at + prefix.length;
    close = seek(close, '}', body);
    // No `}` left: no later prefix is closed either.
    if (close < 0) break;
    newline = seek(newline, '\n', body);
    if (newline >= 0 && newline < close) {
      // Every prefix before that line break is unclosed on its line.
      at = pattern.indexOf('${.PV', newline + 1);
      continue;
    }
    rendered += pattern.slice(from, at) + substitute(prefix, pattern.slice(body, close), values);
    from = close + 1;
    at = pattern.indexOf('${.PV', from);
  }
  return rendered + pattern.slice(from);
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
