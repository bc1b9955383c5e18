import { describe, expect, it } from 'vitest';
import { MinMaxAllocator, RangeAllocatorError } from '../src/gid-allocator/index.ts';

function refusal(action: () => unknown): RangeAllocatorError {
  try {
    action();
  } catch (err) {
    if (err instanceof RangeAllocatorError) return err;
    throw err;
  }
  throw new Error('expected a RangeAllocatorError');
}

describe('MinMaxAllocator', () => {
  it('starts with every value of the range free', () => {
    expect(new MinMaxAllocator(1, 10).free()).toBe(10);
  });

  it('refuses a range whose min exceeds its max, new or moved', () => {
    expect(refusal(() => new MinMaxAllocator(10, 1)).kind).toBe('invalid-range');
    const allocator = new MinMaxAllocator(1, 10);
    expect(refusal(() => allocator.setRange(10, 1)).kind).toBe('invalid-range');
    expect([allocator.min, allocator.max]).toEqual([1, 10]);
  });

  it('counts free values in the current range when the range moves, keeping values taken outside it', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.setRange(1, 2);
    expect(allocator.free()).toBe(2);
    allocator.allocate(1);
    expect(allocator.free()).toBe(1);
    allocator.setRange(1, 1);
    expect(allocator.free()).toBe(0);
    allocator.setRange(2, 2);
    expect(allocator.free()).toBe(1);
    expect(allocator.has(1)).toBe(true);
    allocator.setRange(1, 2);
    expect(allocator.free()).toBe(1);
  });

  it('hands out the lowest free value next and counts it taken', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.allocate(1);
    allocator.allocate(3);
    expect(allocator.allocateNext()).toBe(2);
    expect(allocator.has(2)).toBe(true);
    expect(allocator.allocateNext()).toBe(4);
    expect(allocator.free()).toBe(6);
  });

  it('hands out every value of the range once, then reports the range full', () => {
    const allocator = new MinMaxAllocator(1, 10);
    const handedOut = Array.from({ length: 10 }, () => allocator.allocateNext());
    expect(new Set(handedOut).size).toBe(10);
    expect(handedOut.every((value) => value >= 1 && value <= 10)).toBe(true);
    expect(refusal(() => allocator.allocateNext()).kind).toBe('range-full');
    expect(allocator.free()).toBe(0);
  });

  it('takes a given value once: a second take is a conflict', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.allocate(3);
    expect(allocator.has(3)).toBe(true);
    expect(allocator.free()).toBe(9);
    expect(refusal(() => allocator.allocate(3)).kind).toBe('conflict');
    expect(allocator.free()).toBe(9);
  });

  it('refuses to take a value outside the range', () => {
    const allocator = new MinMaxAllocator(1, 10);
    expect(refusal(() => allocator.allocate(11)).kind).toBe('out-of-range');
    expect(refusal(() => allocator.allocate(0)).kind).toBe('out-of-range');
    expect(allocator.has(11)).toBe(false);
    expect(allocator.free()).toBe(10);
  });

  it('frees a released value for the next allocation', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.allocate(3);
    allocator.release(3);
    expect(allocator.has(3)).toBe(false);
    expect(allocator.free()).toBe(10);
    allocator.setRange(3, 3);
    expect(allocator.allocateNext()).toBe(3);
  });

  it('ignores the release of a value not taken or outside the range', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.release(5);
    allocator.release(42);
    expect(allocator.free()).toBe(10);
  });

  it('frees a value taken before the range moved away from it without touching the free count', () => {
    const allocator = new MinMaxAllocator(1, 10);
    allocator.allocate(9);
    allocator.setRange(1, 5);
    allocator.release(9);
    expect(allocator.has(9)).toBe(false);
    expect(allocator.free()).toBe(5);
  });
});
