/**
 * Reads a LIST response body one item at a time. A LIST served from the API server's watch cache is
 * unpaginated: 100 000 volumes arrive as one body of over 100 MB. Read whole, that body is held as
 * received chunks, then as one string, then as one parsed graph with every item's `managedFields`,
 * all at once; the chunks alone leave that much of the C heap fragmented for the life of the
 * process. Split here as it arrives, each chunk is scanned as bytes and dropped, and each item is
 * decoded from its own bytes and handed on before the next one is read.
 *
 * The scan works on bytes, not decoded text: JSON's structural characters are ASCII, which UTF-8
 * never uses inside a multi-byte character, so a chunk cut anywhere scans the same, and only each
 * item's own bytes are ever decoded, so an item's `managedFields` can be cut out before it is parsed
 * (`managed-fields-cut.ts`).
 */

import {
  backslash,
  closeBrace,
  closeBracket,
  comma,
  isWhitespace,
  openBrace,
  openBracket,
  quote,
} from './json-bytes.ts';
import { textWithoutManagedFields } from './managed-fields-cut.ts';

/** The JSON text before an array that is the top-level `items` member. */
const itemsKey = /"items"\s*:\s*$/;

/** Options of {@link ListBodyDecoder} and {@link readListBody}. */
export interface ListBodyOptions {
  /** Leave each item's `metadata.managedFields` out: its text is skipped, never parsed. */
  readonly omitManagedFields?: boolean;
}

/**
 * Splits the JSON text of a Kubernetes list, fed as UTF-8 bytes in pieces of any size, into its
 * items (each parsed and passed to `onItem` as soon as its text is complete) and the rest of the
 * object, which {@link ListBodyDecoder.end} returns with `items: []`. Items must be objects, as in
 * every list the API serves.
 */
export class ListBodyDecoder {
  readonly #onItem: (item: unknown) => void;
  readonly #omitManagedFields: boolean;
  /** Copies of the current item's bytes from earlier pieces, from its opening brace. */
  #carried: Buffer[] = [];
  /** The body outside the items' text, as received. */
  #envelope: Buffer[] = [];
  #itemOpen = false;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #inItems = false;

  /** With `omitManagedFields`, each item's `metadata.managedFields` is cut from its text unparsed. */
  constructor(onItem: (item: unknown) => void, options: ListBodyOptions = {}) {
    this.#onItem = onItem;
    this.#omitManagedFields = options.omitManagedFields ?? false;
  }

  /** Scans the next piece of the body. Throws on text that cannot be a list. */
  write(piece: Uint8Array): void {
    const bytes = Buffer.isBuffer(piece)
      ? piece
      : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    const length = bytes.length;
    // The state lives in locals while the loop runs: this loop is the decoder's whole cost.
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let itemOpen = this.#itemOpen;
    // Where the bytes not yet copied to the envelope, or the current item, start.
    let start = 0;
    let i = 0;
    if (escaped && length > 0) {
      escaped = false;
      i = 1;
    }
    for (; i < length; i++) {
      let c = bytes[i] as number;
      if (inString) {
        // Most of a body is string contents: run through them in a loop of their own.
        while (c !== quote && c !== backslash && ++i < length) c = bytes[i] as number;
        if (i === length) break;
        if (c === quote) inString = false;
        else if (i + 1 === length) escaped = true;
        else i++;
      } else if (c === quote) {
        inString = true;
      } else if (c === openBrace || c === openBracket) {
        if (this.#inItems && depth === 2) {
          if (c !== openBrace) throw new SyntaxError('list body: an item is not an object');
          start = i;
          itemOpen = true;
        } else if (c === openBracket && depth === 1 && !this.#inItems && this.#isItemsKey(bytes, start, i)) {
          this.#envelope.push(Buffer.from(bytes.subarray(start, i + 1)));
          this.#inItems = true;
          start = i + 1;
        }
        depth++;
      } else if (c === closeBrace || c === closeBracket) {
        depth--;
        if (depth < 0) throw new SyntaxError('list body: unbalanced brackets');
        if (this.#inItems && depth === 2 && itemOpen) {
          this.#onItem(JSON.parse(this.#itemText(bytes, start, i + 1)));
          itemOpen = false;
          start = i + 1;
        } else if (this.#inItems && depth === 1) {
          this.#inItems = false;
          start = i;
        }
      } else if (this.#inItems && depth === 2 && c !== comma && !isWhitespace(c)) {
        throw new SyntaxError('list body: an item is not an object');
      }
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#itemOpen = itemOpen;
    // Copied: a piece's memory is not ours to hold past this call.
    if (itemOpen) this.#carried.push(Buffer.from(bytes.subarray(start)));
    else if (!this.#inItems && start < length) this.#envelope.push(Buffer.from(bytes.subarray(start)));
  }

  /** The list without its items, once the whole body was written. Throws when the body was cut short. */
  end(): Record<string, unknown> {
    if (this.#depth !== 0 || this.#inString || this.#itemOpen) {
      throw new SyntaxError('list body: unexpected end of the body');
    }
    const envelope: unknown = JSON.parse(Buffer.concat(this.#envelope).toString('utf8'));
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
      throw new SyntaxError('list body: not an object');
    }
    return envelope as Record<string, unknown>;
  }

  /** Whether the envelope so far, then `bytes[start…end)`, ends in the `items` member's key. */
  #isItemsKey(bytes: Buffer, start: number, end: number): boolean {
    // Latin-1 maps each byte to one character: the key and JSON's whitespace are ASCII.
    const before = Buffer.concat([...this.#envelope, bytes.subarray(start, end)]).toString('latin1');
    return itemsKey.test(before);
  }

  /** The text of the item that ends at `bytes[end - 1]`, begun at `start` or in the carried bytes. */
  #itemText(bytes: Buffer, start: number, end: number): string {
    let source = bytes;
    let from = start;
    let to = end;
    if (this.#carried.length > 0) {
      source = Buffer.concat([...this.#carried, bytes.subarray(0, end)]);
      from = 0;
      to = source.length;
      this.#carried = [];
    }
    return this.#omitManagedFields
      ? textWithoutManagedFields(source, from, to)
      : source.toString('utf8', from, to);
  }
}

/**
 * Decodes a LIST body stream: each item goes through `decodeItem` as soon as it is complete. Returns
 * the decoded items and the list's other members.
 */
export async function readListBody<T>(
  body: AsyncIterable<Uint8Array>,
  decodeItem: (item: unknown) => T,
  options: ListBodyOptions = {},
): Promise<{ items: T[]; list: Record<string, unknown> }> {
  const items: T[] = [];
  const decoder = new ListBodyDecoder((item) => items.push(decodeItem(item)), options);
  for await (const chunk of body) decoder.write(chunk);
  return { items, list: decoder.end() };
}
