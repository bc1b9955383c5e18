import { describe, expect, it } from 'vitest';
import { textWithoutManagedFields } from '../src/client/managed-fields-cut.ts';

const managedFields = [
  { manager: 'm', fieldsV1: { 'f:spec': { '.': {}, 'f:a': {} } }, note: 'a ] } " \\ ,' },
];

function cut(text: string): string {
  const bytes = Buffer.from(`  ${text}  `);
  return textWithoutManagedFields(bytes, 2, bytes.length - 2);
}

describe('textWithoutManagedFields', () => {
  it.each([
    ['the last member', { metadata: { name: 'a', labels: { x: '1' }, managedFields }, spec: { n: 1 } }],
    ['the first member', { metadata: { managedFields, name: 'a', uid: 'u' }, spec: {} }],
    ['the only member', { metadata: { managedFields }, spec: [] }],
    ['a middle member', { spec: { s: 'é€😀' }, metadata: { name: 'a', managedFields, finalizers: ['f'] } }],
    [
      'a member after values of every kind',
      { metadata: { a: 1.5e3, b: true, c: null, d: [{}], managedFields } },
    ],
  ])('cuts the member out when it is %s of metadata, leaving the rest as it was', (_, object) => {
    const { managedFields: _dropped, ...metadata } = object.metadata;
    expect(JSON.parse(cut(JSON.stringify(object)))).toEqual({ ...object, metadata });
    expect(JSON.parse(cut(JSON.stringify(object, null, 2)))).toEqual({ ...object, metadata });
  });

  it('keeps a managedFields that is not a member of the top-level metadata, and a string that names it', () => {
    const object = {
      spec: { metadata: { managedFields } },
      metadata: { name: 'a', annotations: { note: '"managedFields":[]' } },
    };
    const text = JSON.stringify(object);
    expect(cut(text)).toBe(text);
  });

  it('leaves text that is not well-formed as it is, for JSON.parse to reject', () => {
    for (const text of [
      '{"metadata":{"managedFields":[{"a":1}],}',
      '{"metadata":{"name" "a","managedFields":[]}}',
      '{"metadata":{"managedFields":[{"a":"x',
    ]) {
      expect(cut(text)).toBe(text);
    }
  });
});
