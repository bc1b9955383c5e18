/**
 * Values spelled the way Go programs read them: `strconv.ParseBool` booleans and `time.ParseDuration`
 * durations. Manifests written for the Go provisioners use every spelling these accept.
 */

const truthy: readonly string[] = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const falsy: readonly string[] = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** Every boolean spelling Go accepts, for error messages. */
export const goBooleanSpellings: string = [...truthy, ...falsy].join(' ');

/** The boolean `value` spells, or `undefined` when Go's `strconv.ParseBool` would refuse it. */
export function parseGoBoolean(value: string): boolean | undefined {
  if (truthy.includes(value)) return true;
  if (falsy.includes(value)) return false;
  return undefined;
}

const unitMs: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const wholeDuration = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/u;
const durationPart = /(\d+(?:\.\d+)?)(ms|s|m|h)/gu;

/**
 * Milliseconds of a Go duration such as `500ms`, `15s` or `1m30s`; `undefined` when it is not one.
 * Units below a millisecond and signs are refused: no flag takes them.
 */
export function parseGoDuration(value: string): number | undefined {
  if (!wholeDuration.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(durationPart)) {
    total += Number(amount) * (unitMs[unit ?? ''] ?? 0);
  }
  return Math.round(total);
}
