/** JSON's structural characters as UTF-8 bytes, for the scans that split and trim LIST bodies. */

export const quote = 0x22;
export const backslash = 0x5c;
export const openBrace = 0x7b;
export const closeBrace = 0x7d;
export const openBracket = 0x5b;
export const closeBracket = 0x5d;
export const comma = 0x2c;
export const colon = 0x3a;

/** Whether byte `c` is JSON whitespace. */
export function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
