/**
 * Label and field selectors of list and watch calls, evaluated on objects in wire form.
 *
 * Labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists) and `!k` (absent),
 * comma-separated. Fields: `path=v`, `path==v`, `path!=v` on any dotted path holding a string
 * (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`…); the real API server
 * accepts only a few paths per resource, the fake accepts all.
 */
import type { ResourceDescriptor } from '../client/resource-client.ts';
import { statusError } from './status-error.ts';

/** A compiled selector: whether an object in wire form matches. */
export type ObjectPredicate = (object: Readonly<Record<string, unknown>>) => boolean;

type LabelRequirement =
  | { readonly op: 'eq' | 'neq'; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists' | 'absent'; readonly key: string };

/** Splits on commas outside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms.map((term) => term.trim()).filter((term) => term !== '');
}

function invalid(kind: string, selector: string, term: string): Error {
  return statusError(
    'BadRequest',
    `unable to parse requirement: invalid ${kind} selector ${JSON.stringify(selector)}: ${JSON.stringify(term)}`,
  );
}

function parseLabelTerm(selector: string, term: string): LabelRequirement {
  const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return { op: op === 'in' ? 'in' : 'notin', key, values };
  }
  const comparison = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s=!]*)$/.exec(term);
  if (comparison) {
    const [, key = '', op, value = ''] = comparison;
    return { op: op === '!=' ? 'neq' : 'eq', key, value };
  }
  const existence = /^(!?)([^\s!=(),]+)$/.exec(term);
  if (existence) {
    const [, bang, key = ''] = existence;
    return { op: bang ? 'absent' : 'exists', key };
  }
  throw invalid('label', selector, term);
}

function matchesLabel(requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const value = labels[requirement.key];
  switch (requirement.op) {
    case 'eq':
      return value === requirement.value;
    case 'neq':
      return value !== requirement.value;
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case 'notin':
      return value === undefined || !requirement.values.includes(value);
    case 'exists':
      return value !== undefined;
    case 'absent':
      return value === undefined;
  }
}

/** Compiles a label selector; an empty or absent one matches everything. Rejects bad syntax with a 400 ApiError. */
export function labelSelector(selector: string | undefined): ObjectPredicate {
  const requirements = splitTerms(selector ?? '').map((term) => parseLabelTerm(selector ?? '', term));
  return (object) => {
    const labels = (object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
    return requirements.every((requirement) => matchesLabel(requirement, labels));
  };
}

function fieldValue(object: Readonly<Record<string, unknown>>, path: string): string {
  let current: unknown = object;
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null) return '';
    current = (current as Record<string, unknown>)[part];
  }
  return typeof current === 'string' || typeof current === 'number' || typeof current === 'boolean'
    ? String(current)
    : '';
}

/** Compiles a field selector; an empty or absent one matches everything. A missing field reads as `''`. */
export function fieldSelector(selector: string | undefined): ObjectPredicate {
  const requirements = splitTerms(selector ?? '').map((term) => {
    const match = /^([\w.-]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!match) throw invalid('field', selector ?? '', term);
    const [, path = '', op, value = ''] = match;
    return { path, negate: op === '!=', value };
  });
  return (object) =>
    requirements.every(({ path, negate, value }) => (fieldValue(object, path) === value) !== negate);
}

/** What a list or watch call selects: its namespace (of a namespaced resource), labels and fields. */
export function objectSelector(
  descriptor: ResourceDescriptor,
  options: { namespace?: string; labelSelector?: string; fieldSelector?: string },
): ObjectPredicate {
  const labels = labelSelector(options.labelSelector);
  const fields = fieldSelector(options.fieldSelector);
  const namespace = descriptor.namespaced ? options.namespace : undefined;
  return (object) =>
    (!namespace || (object.metadata as { namespace?: string } | undefined)?.namespace === namespace) &&
    labels(object) &&
    fields(object);
}
