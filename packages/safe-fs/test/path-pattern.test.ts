// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal `${…}` text.
import { describe, expect, it } from 'vitest';
import { isSafeFsError, type PathPatternValues, renderPathPattern, resolveVolumePath } from '../src/index.ts';

const values: PathPatternValues = {
  claim: {
    namespace: 'team-a',
    name: 'db',
    labels: { app: 'postgres', 'app.kubernetes.io/name': 'pg', empty: '' },
    annotations: {
      'nfs.io/storage-path': 'shared/pg',
      traversal: '../../x',
      nested: 'a/../../b',
      absolute: '/etc',
      dotdot: '..',
      placeholder: '${.PVC.namespace}',
    },
  },
  pvName: 'pvc-1234',
};

describe('renderPathPattern', () => {
  it.each([
    ['${.PVC.namespace}-${.PVC.name}', 'team-a-db'],
    ['${.PVC.namespace}/${.PVC.name}', 'team-a/db'],
    ['${.PVC.labels.app}', 'postgres'],
    ['${.PVC.labels.app.kubernetes.io/name}', 'pg'],
    ['${.PVC.annotations.nfs.io/storage-path}', 'shared/pg'],
    ['${.PV.name}', 'pvc-1234'],
    ['${.PVC.namespace}/${.PV.name}', 'team-a/pvc-1234'],
    ['literal/text', 'literal/text'],
    ['${.PVC.missing}', ''],
    ['${.PVC.labels.missing}', ''],
    ['${.PVC.annotations.missing}', ''],
    ['${.PVC.labels}', ''],
    ['${.PV.uid}', ''],
    ['${.PVC.labels.constructor}', ''],
    ['${.PVC.annotations.__proto__}', ''],
    ['x-${.PVC.name', 'x-${.PVC.name'],
    ['${.PVC.name}}', 'db}'],
    ['${.PVC.name}${.PVC.name}', 'dbdb'],
  ])('renders %j as %j', (pattern, rendered) => {
    expect(renderPathPattern(pattern, values)).toBe(rendered);
  });

  it('substitutes values once, never expanding placeholders that a value contains', () => {
    expect(renderPathPattern('${.PVC.annotations.placeholder}-${.PVC.namespace}', values)).toBe(
      '${.PVC.namespace}-team-a',
    );
  });

  it('renders a value that is not a string as a missing key', () => {
    const annotations = { count: 3, dir: 'x' } as unknown as Record<string, string>;
    const claim = { ...values.claim, annotations };
    expect(renderPathPattern('${.PVC.annotations.count}/${.PVC.annotations.dir}', { ...values, claim })).toBe(
      '/x',
    );
  });

  it.each([
    ['unclosed placeholders', '${.PVC.'.repeat(200_000)],
    ['unclosed placeholders on many lines before one brace', `${'${.PVC.\n'.repeat(100_000)}}`],
    ['closed placeholders on one line', '${.PVC.name}'.repeat(100_000)],
  ])('renders 100 000 and more %s in one pass (a regular expression took seconds)', (_, pattern) => {
    const rendered = renderPathPattern(pattern, { claim: { namespace: 'ns', name: 'db' }, pvName: 'pv' });
    expect(rendered.length).toBeLessThanOrEqual(pattern.length);
  });

  it('treats the placeholder text like Go: a newline ends the key', () => {
    expect(renderPathPattern('${.PVC.labels.a\npp}', values)).toBe('${.PVC.labels.a\npp}');
  });
});

describe('resolveVolumePath', () => {
  const fallback = 'team-a-db-pvc-1234';

  it.each([
    [undefined, fallback],
    ['', fallback],
    ['${.PVC.annotations.missing}', fallback],
    ['${.PVC.labels.empty}', fallback],
    ['${.PVC.annotations.missing}/${.PVC.labels.missing}', fallback],
    ['${.PVC.namespace}/${.PVC.name}', 'team-a/db'],
    ['${.PVC.annotations.nfs.io/storage-path}', 'shared/pg'],
  ])('pattern %j resolves to %j', (pattern, resolved) => {
    expect(resolveVolumePath(pattern, values, fallback)).toBe(resolved);
  });

  it.each([
    ['${.PVC.annotations.dotdot}', 'it has a ".." segment'],
    ['${.PVC.annotations.traversal}', 'it has a ".." segment'],
    ['${.PVC.annotations.nested}', 'it has a ".." segment'],
    ['${.PVC.annotations.absolute}', 'it is absolute'],
    ['${.PVC.namespace}/${.PVC.name}/../../ns2/pvc2', 'it has a ".." segment'],
    ['${.PVC.namespace}/${.PVC.name}/${.PVC.annotations.traversal}', 'it has a ".." segment'],
    ['${.PVC.annotations.missing}/${.PVC.name}', 'it is absolute'],
    ['${.PVC.namespace}/${.PVC.annotations.missing}/x', 'it has an empty segment'],
    ['./${.PVC.name}', 'it has a "." segment'],
  ])('refuses pattern %j before any cleaning: %s', (pattern, reason) => {
    let refused: unknown;
    try {
      resolveVolumePath(pattern, values, fallback);
    } catch (err) {
      refused = err;
    }
    expect(isSafeFsError(refused) && refused.kind === 'invalid-path').toBe(true);
    expect((refused as Error).message).toContain(reason);
  });

  it('validates the fallback too', () => {
    expect(() => resolveVolumePath(undefined, values, '../escape')).toThrow('it has a ".." segment');
  });
});
