import { describe, expect, it } from 'vitest';
import { compareQuantities, quantityBytes, storageBytes } from '../src/client/quantity.ts';

describe('quantityBytes', () => {
  const cases: [string, bigint][] = [
    ['0', 0n],
    ['1024', 1024n],
    ['1Ki', 1024n],
    ['2Mi', 2n * 1024n ** 2n],
    ['1Gi', 1024n ** 3n],
    ['1.5Gi', 1536n * 1024n ** 2n],
    ['1G', 1_000_000_000n],
    ['500M', 500_000_000n],
    ['1k', 1000n],
    ['2e3', 2000n],
    ['1E', 10n ** 18n],
    ['.5Ki', 512n],
    // Fractions of a byte round up, as the API server rounds storage.
    ['1500m', 2n],
    ['1.0001', 2n],
  ];
  for (const [quantity, bytes] of cases) {
    it(`reads ${quantity} as ${bytes} bytes`, () => expect(quantityBytes(quantity)).toBe(bytes));
  }

  it('refuses what is not a quantity', () => {
    for (const text of ['', 'Gi', '1GB', 'one', '1 Gi', '1.2.3']) {
      expect(() => quantityBytes(text), text).toThrow(TypeError);
    }
  });
});

describe('compareQuantities', () => {
  it('compares across notations', () => {
    expect(compareQuantities('1Gi', '1073741824')).toBe(0);
    expect(compareQuantities('1G', '1Gi')).toBe(-1);
    expect(compareQuantities('2Mi', '2M')).toBe(1);
  });

  it('takes a missing quantity as zero', () => {
    expect(compareQuantities(undefined, '0')).toBe(0);
    expect(compareQuantities('1Mi', undefined)).toBe(1);
  });
});

describe('storageBytes', () => {
  it('reads sizes as bytes, rounding up, and answers undefined for what is no size', () => {
    expect(storageBytes('1Gi')).toBe(2n ** 30n);
    expect(storageBytes('1.5Ki')).toBe(1536n);
    expect(storageBytes('0.1')).toBe(1n);
    for (const text of [undefined, '', '-1Gi', '1Gb', 'Gi', '1 Gi x'])
      expect(storageBytes(text)).toBeUndefined();
  });
});
