import { describe, expect, it } from 'vitest';
import { goBooleanSpellings, parseGoBoolean, parseGoDuration } from '../src/cli/go-syntax.ts';

describe('parseGoBoolean', () => {
  it('accepts exactly the spellings of strconv.ParseBool', () => {
    for (const value of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseGoBoolean(value)).toBe(true);
    for (const value of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseGoBoolean(value)).toBe(false);
    for (const value of ['', 'yes', 'tRUE', ' true', 'on']) expect(parseGoBoolean(value)).toBeUndefined();
    expect(goBooleanSpellings).toBe('1 t T TRUE true True 0 f F FALSE false False');
  });
});

describe('parseGoDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['1.5s', 1_500],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['0s', 0],
  ])('reads %s as %i ms', (value, ms) => {
    expect(parseGoDuration(value)).toBe(ms);
  });

  it.each(['', '15', 's', '-1s', '1d', '1s ', '1us'])('refuses %j', (value) => {
    expect(parseGoDuration(value)).toBeUndefined();
  });
});
