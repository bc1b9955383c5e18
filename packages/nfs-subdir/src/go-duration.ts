/**
 * Go duration strings (`500ms`, `15s`, `1m30s`) for the leader-election flags, spelled as the Go
 * sidecars spell them.
 */

const unitMs: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const whole = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/u;
const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/gu;

/** Milliseconds of a Go duration such as `1m30s`; `undefined` when it is not one. */
export function parseGoDuration(value: string): number | undefined {
  if (!whole.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(part)) total += Number(amount) * (unitMs[unit ?? ''] ?? 0);
  return Math.round(total);
}
