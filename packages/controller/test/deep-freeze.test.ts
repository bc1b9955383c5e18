import { describe, expect, it } from 'vitest';
import { frozenClone } from '../src/internal/deep-freeze.ts';

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

  it('copies dates as dates, and what it hands out stays unchanged when the cache changes', () => {
    const cached = { metadata: { creationTimestamp: new Date('2026-11-24T01:02:03Z'), finalizers: ['f'] } };
    const copy = frozenClone(cached);
    expect(copy.metadata.creationTimestamp).toBeInstanceOf(Date);
    expect(copy.metadata.creationTimestamp).not.toBe(cached.metadata.creationTimestamp);
    cached.metadata.creationTimestamp.setTime(0);
    cached.metadata.finalizers.push('g');
    expect(copy.metadata.creationTimestamp.toISOString()).toBe('2026-11-24T01:02:03.000Z');
    expect(copy.metadata.finalizers).toEqual(['f']);
    expect(() => (copy.metadata.finalizers as string[]).push('h')).toThrow(TypeError);
  });
});
