import { describe, expect, it } from 'vitest';
import { quantityBytes } from '../src/storage-quantity.ts';

describe('quantityBytes', () => {
  it('reads binary, decimal, fractional and exponent quantities as bytes, rounding up', () => {
    expect(quantityBytes('1Gi')).toBe(2 ** 30);
    expect(quantityBytes('500M')).toBe(500e6);
    expect(quantityBytes('1.5Ki')).toBe(1536);
    expect(quantityBytes('1e3')).toBe(1000);
    expect(quantityBytes('0.1')).toBe(1);
    expect(quantityBytes('42')).toBe(42);
  });

  it('answers undefined for what is no byte count', () => {
    for (const text of [undefined, '', '-1Gi', '1Gb', 'Gi', '1 Gi x']) {
      expect(quantityBytes(text)).toBeUndefined();
    }
  });
});
