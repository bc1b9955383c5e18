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
});
