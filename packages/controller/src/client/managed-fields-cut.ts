/**
 * Cuts `metadata.managedFields` out of an object's JSON text before it is parsed. Server-side-apply
 * bookkeeping is often half an object's text and most of its small values; a cache that drops it
 * anyway spends most of a LIST's parse and garbage on it. Cutting the bytes costs one walk over the
 * metadata members before it, where parsing it costs three times the whole object's walk.
 *
 * The walk reads only well-formed text: on anything else it cuts nothing, so `JSON.parse` sees the
 * object's own text and reports its own error.
 */

import {
  backslash,
  closeBrace,
  closeBracket,
  colon,
  comma,
  isWhitespace,
  openBrace,
  openBracket,
  quote,
} from './json-bytes.ts';

/** The quoted keys the walk looks for, as bytes. */
const metadataKey = Buffer.from('"metadata"');
const managedFieldsKey = Buffer.from('"managedFields"');

/**
 * The UTF-8 text of the JSON object `bytes[start…end)`, without its `metadata.managedFields`
 * member when it has one.
 */
export function textWithoutManagedFields(bytes: Buffer, start: number, end: number): string {
  const at = bytes.indexOf(managedFieldsKey, start);
  const cut = at < 0 || at >= end ? undefined : managedFieldsSpan(bytes, start, end);
  if (cut === undefined) return bytes.toString('utf8', start, end);
  return bytes.toString('utf8', start, cut.from) + bytes.toString('utf8', cut.to, end);
}

/** Bytes to remove: the member with one of the commas around it, so the rest stays valid. */
interface Span {
  readonly from: number;
  readonly to: number;
}

function managedFieldsSpan(bytes: Buffer, start: number, end: number): Span | undefined {
  const metadata = memberValue(bytes, start, end, metadataKey);
  if (metadata === undefined || bytes[metadata.value] !== openBrace) return undefined;
  const member = memberValue(bytes, metadata.value, end, managedFieldsKey);
  if (member === undefined) return undefined;
  const valueEnd = skipValue(bytes, member.value, end);
  if (valueEnd < 0) return undefined;
  if (member.comma >= 0) return { from: member.comma, to: valueEnd };
  // The first member: the comma after it goes with it, if another member follows.
  const next = skipWhitespace(bytes, valueEnd, end);
  if (bytes[next] === closeBrace) return { from: member.key, to: valueEnd };
  if (bytes[next] !== comma || bytes[skipWhitespace(bytes, next + 1, end)] !== quote) return undefined;
  return { from: member.key, to: next + 1 };
}

/** Where a member of an object starts: its key, the comma before it (-1: none) and its value. */
interface Member {
  readonly key: number;
  readonly comma: number;
  readonly value: number;
}

/** The member `key` (quoted, unescaped) of the object that opens at `bytes[open]`. */
function memberValue(bytes: Buffer, open: number, end: number, key: Buffer): Member | undefined {
  if (bytes[open] !== openBrace) return undefined;
  let before = -1;
  let i = skipWhitespace(bytes, open + 1, end);
  while (i < end && bytes[i] === quote) {
    const keyEnd = skipString(bytes, i, end);
    if (keyEnd < 0) return undefined;
    const colonAt = skipWhitespace(bytes, keyEnd, end);
    if (bytes[colonAt] !== colon) return undefined;
    const value = skipWhitespace(bytes, colonAt + 1, end);
    if (keyEnd - i === key.length && bytes.compare(key, 0, key.length, i, keyEnd) === 0) {
      return { key: i, comma: before, value };
    }
    const valueEnd = skipValue(bytes, value, end);
    if (valueEnd < 0) return undefined;
    const next = skipWhitespace(bytes, valueEnd, end);
    if (bytes[next] !== comma) return undefined;
    before = next;
    i = skipWhitespace(bytes, next + 1, end);
  }
  return undefined;
}

/** The index after the JSON value at `bytes[i]`; -1 when it does not end before `end`. */
function skipValue(bytes: Buffer, i: number, end: number): number {
  const first = bytes[i];
  if (first === quote) return skipString(bytes, i, end);
  if (first !== openBrace && first !== openBracket) {
    // A number, true, false or null: up to the next delimiter.
    let at = i;
    while (at < end && !isDelimiter(bytes[at] as number)) at++;
    return at === i ? -1 : at;
  }
  let depth = 0;
  for (let at = i; at < end; at++) {
    const c = bytes[at] as number;
    if (c === quote) {
      at = skipString(bytes, at, end) - 1;
      if (at < 0) return -1;
    } else if (c === openBrace || c === openBracket) {
      depth++;
    } else if (c === closeBrace || c === closeBracket) {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return -1;
}

/** The index after the string that opens at `bytes[i]`; -1 when it does not end before `end`. */
function skipString(bytes: Buffer, i: number, end: number): number {
  for (let at = i + 1; at < end; at++) {
    const c = bytes[at];
    if (c === backslash) at++;
    else if (c === quote) return at + 1;
  }
  return -1;
}

function skipWhitespace(bytes: Buffer, i: number, end: number): number {
  let at = i;
  while (at < end && isWhitespace(bytes[at] as number)) at++;
  return at;
}

function isDelimiter(c: number): boolean {
  return c === comma || c === closeBrace || c === closeBracket || isWhitespace(c);
}
