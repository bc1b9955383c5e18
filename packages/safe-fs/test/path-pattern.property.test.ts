// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal `${…}` text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PathPatternValues, renderPathPattern } from '../src/index.ts';

const values: PathPatternValues = {
  claim: { namespace: 'ns', name: 'db', labels: { a: 'L' }, annotations: { 'a.b/c': 'A' } },
  pvName: 'pv-1',
};

// Upstream's expression (Go's `.` spelled `[^\n]`) and ours for `${.PV.…}`, substituted in one pass:
// the render's reference, scanning backwards from every unclosed prefix.
const expression = /\$\{\.PVC\.((labels|annotations)\.([^\n]*?)|[^\n]*?)\}|\$\{\.PV\.([^\n]*?)\}/gu;
function reference(pattern: string): string {
  const own = (map: Readonly<Record<string, string>> | undefined, key: string) =>
    map !== undefined && Object.hasOwn(map, key) ? (map[key] ?? '') : '';
  return pattern.replace(expression, (_m, field?: string, map?: string, key?: string, pv?: string) => {
    if (pv !== undefined) return pv === 'name' ? values.pvName : '';
    if (map === 'labels') return own(values.claim.labels, key ?? '');
    if (map === 'annotations') return own(values.claim.annotations, key ?? '');
    if (field === 'namespace') return values.claim.namespace;
    if (field === 'name') return values.claim.name;
    return '';
  });
}

const pieces = [
  '${.PVC.',
  '${.PV.',
  '${.PV',
  '${',
  '}',
  '\n',
  'name',
  'namespace',
  'labels.',
  'a',
  '.b/c',
  'annotations.',
  '.',
  '$',
];

describe('renderPathPattern', () => {
  it('renders every pattern as upstream’s expression does', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), (parts) => {
        const pattern = parts.join('');
        expect(renderPathPattern(pattern, values)).toBe(reference(pattern));
      }),
      { numRuns: 5000 },
    );
  });
});
