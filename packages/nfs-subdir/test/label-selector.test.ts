import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type LabelRequirement,
  labelKeyProblem,
  labelValueProblem,
  parseLabelSelector,
  selectorMatches,
} from '../src/label-selector.ts';

const parsed = (text: string): readonly LabelRequirement[] => parseLabelSelector(text).requirements;
const matches = (text: string, labels: Record<string, string>): boolean =>
  selectorMatches(parseLabelSelector(text), labels);

describe('parseLabelSelector', () => {
  it.each([
    ['disk=ssd', [{ key: 'disk', operator: 'in', values: ['ssd'] }]],
    ['disk==ssd', [{ key: 'disk', operator: 'in', values: ['ssd'] }]],
    ['disk!=hdd', [{ key: 'disk', operator: 'not-in', values: ['hdd'] }]],
    ['disk=', [{ key: 'disk', operator: 'in', values: [''] }]],
    ['zone in (a,b)', [{ key: 'zone', operator: 'in', values: ['a', 'b'] }]],
    ['zone notin (c)', [{ key: 'zone', operator: 'not-in', values: ['c'] }]],
    ['legacy', [{ key: 'legacy', operator: 'exists' }]],
    ['!legacy', [{ key: 'legacy', operator: 'does-not-exist' }]],
    ['example.com/tier=gold', [{ key: 'example.com/tier', operator: 'in', values: ['gold'] }]],
    [
      ' disk = ssd , zone in ( a , b ) , ! legacy ',
      [
        { key: 'disk', operator: 'in', values: ['ssd'] },
        { key: 'zone', operator: 'in', values: ['a', 'b'] },
        { key: 'legacy', operator: 'does-not-exist' },
      ],
    ],
    ['', []],
    ['  ', []],
  ])('reads %j', (text, requirements) => {
    expect(parsed(text)).toEqual(requirements);
  });

  it.each([
    ['a dangling comma', 'disk=ssd,', 'expected a label key at character 10, found the end'],
    ['a leading comma', ',disk', 'expected a label key at character 1, found ","'],
    ['two operators', 'disk==ssd=x', 'expected "," or the end at character 10, found "="'],
    [
      'a value after existence',
      'disk ssd',
      'expected one of =, ==, !=, in, notin, "," or the end at character 6',
    ],
    ['an unclosed set', 'zone in (a,b', 'expected "," or ")" at character 13, found the end'],
    ['a set without parentheses', 'zone in a', 'expected "(" opening a list of values at character 9'],
    ['an empty set', 'zone in ()', 'expected a value (a set of values is never empty) at character 10'],
    ['a comparison', 'size>3', 'found ">" (the operators < and > are not accepted for exports)'],
    ['a negated equality', '!disk=ssd', 'expected "," or the end at character 6, found "="'],
    ['a bad key', 'disk_=ssd', '"disk_" is not a label key'],
    ['an upper-case prefix', 'Example.com/tier', 'its prefix must be a DNS subdomain'],
    ['a bad value', 'disk=-ssd', '"-ssd" is not a label value'],
    ['a value too long', `disk=${'a'.repeat(64)}`, 'is not a label value'],
  ])('refuses %s', (_, text, message) => {
    expect(() => parseLabelSelector(text)).toThrow(message);
  });

  it('throws only its own errors, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ab=!,() in/.x-'.split('')) }), (text) => {
        try {
          parseLabelSelector(text);
        } catch (err) {
          expect((err as Error).message).toMatch(/^expected |is not a label (key|value)/u);
        }
      }),
    );
  });
});

describe('selectorMatches', () => {
  it.each([
    ['disk=ssd', { disk: 'ssd' }, true],
    ['disk=ssd', { disk: 'hdd' }, false],
    ['disk=ssd', {}, false],
    ['disk!=hdd', {}, true],
    ['disk!=hdd', { disk: 'hdd' }, false],
    ['zone in (a,b)', { zone: 'b' }, true],
    ['zone in (a,b)', {}, false],
    ['zone notin (a,b)', {}, true],
    ['zone notin (a,b)', { zone: 'a' }, false],
    ['legacy', { legacy: '' }, true],
    ['!legacy', { legacy: '' }, false],
    ['disk=', { disk: '' }, true],
    ['', { any: 'thing' }, true],
    ['disk=ssd,zone in (a,b),!legacy', { disk: 'ssd', zone: 'a' }, true],
    ['disk=ssd,zone in (a,b),!legacy', { disk: 'ssd', zone: 'a', legacy: 'yes' }, false],
  ])('%j on %j: %s', (text, labels, expected) => {
    expect(matches(text, labels)).toBe(expected);
  });

  const key = fc.constantFrom('disk', 'zone', 'example.com/tier');
  const value = fc.constantFrom('', 'a', 'b', 'ssd');
  const requirement = fc.oneof(
    fc
      .record({ key, operator: fc.constantFrom('=', '==', '!='), value })
      .map((r) => `${r.key}${r.operator}${r.value}`),
    fc
      .record({
        key,
        operator: fc.constantFrom('in', 'notin'),
        values: fc.array(fc.constantFrom('a', 'b', 'ssd'), { minLength: 1, maxLength: 3 }),
      })
      .map((r) => `${r.key} ${r.operator} (${r.values.join(',')})`),
    key,
    key.map((k) => `!${k}`),
  );
  const labels = fc.dictionary(key, value);

  it('matches a list of requirements exactly when it matches each one', () => {
    fc.assert(
      fc.property(fc.array(requirement, { minLength: 1, maxLength: 4 }), labels, (list, set) => {
        expect(matches(list.join(','), set)).toBe(list.every((one) => matches(one, set)));
      }),
    );
  });

  it('matches a requirement and its negation never both', () => {
    const negations: [string, string][] = [
      ['disk=a', 'disk!=a'],
      ['disk in (a,b)', 'disk notin (a,b)'],
      ['disk', '!disk'],
    ];
    fc.assert(
      fc.property(labels, (set) => {
        for (const [positive, negative] of negations) {
          expect(matches(positive, set)).toBe(!matches(negative, set));
        }
      }),
    );
  });
});

describe('label syntax', () => {
  it.each(['a', 'a.b-c_d', 'example.com/a', `${'a'.repeat(63)}`, `${'a'.repeat(253)}/a`])(
    'accepts the key %j',
    (key) => {
      expect(labelKeyProblem(key)).toBeUndefined();
    },
  );

  it.each(['', '-a', 'a-', 'a/b/c', '/a', `${'a'.repeat(64)}`, `${'a'.repeat(254)}/a`, 'a b'])(
    'refuses the key %j',
    (key) => {
      expect(labelKeyProblem(key)).toContain('is not a label key');
    },
  );

  it('accepts an empty value, refuses one that does not start and end alphanumeric', () => {
    expect(labelValueProblem('')).toBeUndefined();
    expect(labelValueProblem('ssd.1')).toBeUndefined();
    expect(labelValueProblem('ssd.')).toContain('is not a label value');
  });
});
