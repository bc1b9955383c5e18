/**
 * Go's `strconv.ParseBool`, which both upstream programs use for `archiveOnDelete` and
 * `ENABLE_LEADER_ELECTION`: existing StorageClasses and manifests spell booleans every way it accepts.
 */

const truthy: readonly string[] = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const falsy: readonly string[] = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** Every spelling Go accepts, for error messages. */
export const goBooleanSpellings: string = [...truthy, ...falsy].join(' ');

/** The boolean `value` spells, or `undefined` when Go would refuse it. */
export function parseGoBoolean(value: string): boolean | undefined {
  if (truthy.includes(value)) return true;
  if (falsy.includes(value)) return false;
  return undefined;
}
