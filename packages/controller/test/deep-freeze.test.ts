import { describe, expect, it } from 'vitest';
import { frozenClone } from '../src/controller/deep-freeze.ts';

describe('frozenClone', () => {
  it('hands out a deep-frozen copy, never the cached object', () => {
    const cached = { metadata: { name: 'a', labels: { x: '1' } }, spec: { list: [{ y: 2 }] } };
    const copy = frozenClone(cached);
    expect(copy).toEqual(cached);
    expect(copy).not.toBe(cached);
    expect(Object.isFrozen(copy.metadata.labels)).toBe(true);
    expect(Object.isFrozen(copy.spec.list[0])).toBe(true);
    expect(Object.isFrozen(cached.metadata)).toBe(false);
  });

  it('copies one cached object once, and a replaced object again', () => {
    const cached = { metadata: { name: 'a', resourceVersion: '1' } };
    expect(frozenClone(cached)).toBe(frozenClone(cached));
    const replaced = { metadata: { name: 'a', resourceVersion: '2' } };
    expect(frozenClone(replaced)).not.toBe(frozenClone(cached));
    expect(frozenClone(replaced).metadata.resourceVersion).toBe('2');
  });
});
