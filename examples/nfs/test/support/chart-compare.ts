/**
 * Compares the facts of two renderings object by object and field by field, and filters the result
 * through the reviewed allowances of chart-allowed-differences.ts.
 */
import type { AllowedDifference, RenderMode } from '../chart-allowed-differences.ts';
import type { ObjectFacts } from './chart-facts.ts';

/** One field on which our rendering differs from upstream's. */
export interface FactDifference {
  readonly case: string;
  readonly mode: RenderMode;
  readonly kind: string;
  readonly name: string;
  readonly field: string;
  readonly upstream: unknown;
  readonly ours: unknown;
}

function flatten(facts: ObjectFacts): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  for (const [key, value] of Object.entries(facts)) {
    if (key === 'labels') {
      for (const [label, text] of Object.entries(value as Record<string, string>)) {
        fields.set(`labels.${label}`, text);
      }
    } else if (key !== 'kind' && key !== 'name') {
      fields.set(key, value);
    }
  }
  return fields;
}

/** Every difference between upstream's and our facts of one case. */
export function compareFacts(
  chartCase: string,
  mode: RenderMode,
  upstream: readonly ObjectFacts[],
  ours: readonly ObjectFacts[],
): FactDifference[] {
  const key = (facts: ObjectFacts): string => `${facts.kind}/${facts.name}`;
  const theirs = new Map(upstream.map((facts) => [key(facts), facts]));
  const mine = new Map(ours.map((facts) => [key(facts), facts]));
  const differences: FactDifference[] = [];
  for (const id of new Set([...theirs.keys(), ...mine.keys()])) {
    const [kind = '', ...rest] = id.split('/');
    const base = { case: chartCase, mode, kind, name: rest.join('/') };
    const a = theirs.get(id);
    const b = mine.get(id);
    if (!a || !b) {
      differences.push({ ...base, field: 'present', upstream: !!a, ours: !!b });
      continue;
    }
    const fieldsA = flatten(a);
    const fieldsB = flatten(b);
    for (const field of new Set([...fieldsA.keys(), ...fieldsB.keys()])) {
      const [x, y] = [fieldsA.get(field), fieldsB.get(field)];
      if (JSON.stringify(x) !== JSON.stringify(y)) {
        differences.push({ ...base, field, upstream: x, ours: y });
      }
    }
  }
  return differences;
}

/** Whether a reviewed allowance covers `difference`. */
export function isAllowed(allowance: AllowedDifference, difference: FactDifference): boolean {
  return (
    (allowance.kind === '*' || allowance.kind === difference.kind) &&
    allowance.field === difference.field &&
    (allowance.cases === undefined || allowance.cases.includes(difference.case)) &&
    (allowance.mode === undefined || allowance.mode === difference.mode)
  );
}
