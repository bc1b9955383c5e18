/**
 * Reads a LIST response body one item at a time. A LIST served from the API server's watch cache is
 * unpaginated: 10 000 volumes arrive as one body of several megabytes. Read whole, that body is held
 * as received chunks, then as one string, then as one parsed graph with every item's
 * `managedFields`, all at once; the chunks alone leave that much of the C heap fragmented for the
 * life of the process. Split here as it arrives, each chunk is scanned and dropped, and each item is
 * parsed on its own and handed on before the next one is read.
 */

const quote = 0x22;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const comma = 0x2c;

/** The JSON text before an array that is the top-level `items` member. */
const itemsKey = /"items"\s*:\s*$/;

/**
 * Splits the JSON text of a Kubernetes list, fed in pieces of any size, into its items (each parsed
 * and passed to `onItem` as soon as its text is complete) and the rest of the object, which
 * {@link ListBodyDecoder.end} returns with `items: []`. Items must be objects, as in every list the
 * API serves.
 */
export class ListBodyDecoder {
  readonly #onItem: (item: unknown) => void;
  /** Text already scanned and still needed: the item being read, from its opening brace. */
  #carried = '';
  /** The body outside the items' text. */
  #envelope = '';
  #depth = 0;
  #inString = false;
  #escaped = false;
  #inItems = false;

  constructor(onItem: (item: unknown) => void) {
    this.#onItem = onItem;
  }

  /** Scans the next piece of the body. Throws on text that cannot be a list. */
  write(piece: string): void {
    const text = this.#carried + piece;
    let i = this.#carried.length;
    // Where the text not yet copied to the envelope, or the current item, starts.
    let start = 0;
    let itemOpen = this.#carried !== '';
    // The next backslash and quote at or after `i`, each found once per stretch so the scan stays
    // linear however many escapes a string holds.
    let nextEscape = -2;
    let nextQuote = -2;
    while (i < text.length) {
      if (this.#inString) {
        if (nextEscape !== -1 && nextEscape < i) nextEscape = text.indexOf('\\', i);
        if (nextQuote !== -1 && nextQuote < i) nextQuote = text.indexOf('"', i);
        i = this.#skipString(text, i, nextEscape, nextQuote);
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === quote) {
        this.#inString = true;
      } else if (c === openBrace || c === openBracket) {
        if (this.#inItems && this.#depth === 2) {
          if (c !== openBrace) throw new SyntaxError('list body: an item is not an object');
          start = i;
          itemOpen = true;
        } else if (c === openBracket && this.#depth === 1 && !this.#inItems) {
          const before = this.#envelope + text.slice(start, i);
          if (itemsKey.test(before)) {
            this.#envelope = `${before}[`;
            this.#inItems = true;
            start = i + 1;
          }
        }
        this.#depth++;
      } else if (c === closeBrace || c === closeBracket) {
        this.#depth--;
        if (this.#depth < 0) throw new SyntaxError('list body: unbalanced brackets');
        if (this.#inItems && this.#depth === 2 && itemOpen) {
          this.#onItem(JSON.parse(text.slice(start, i + 1)));
          itemOpen = false;
          start = i + 1;
        } else if (this.#inItems && this.#depth === 1) {
          this.#inItems = false;
          start = i;
        }
      } else if (this.#inItems && this.#depth === 2 && c !== comma && !isWhitespace(c)) {
        throw new SyntaxError('list body: an item is not an object');
      }
      i++;
    }
    if (itemOpen) {
      this.#carried = text.slice(start);
    } else {
      this.#carried = '';
      if (!this.#inItems) this.#envelope += text.slice(start);
    }
  }

  /** The list without its items, once the whole body was written. Throws when the body was cut short. */
  end(): Record<string, unknown> {
    if (this.#depth !== 0 || this.#inString || this.#carried !== '') {
      throw new SyntaxError('list body: unexpected end of the body');
    }
    const envelope: unknown = JSON.parse(this.#envelope);
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
      throw new SyntaxError('list body: not an object');
    }
    return envelope as Record<string, unknown>;
  }

  /**
   * Scans string contents from `i`, given the indexes of the next backslash and quote at or after `i`
   * (-1: none); returns the index after the closing quote, after an escape sequence, or the text's end.
   */
  #skipString(text: string, i: number, nextEscape: number, end: number): number {
    if (this.#escaped) {
      this.#escaped = false;
      return i + 1;
    }
    if (nextEscape >= 0 && (end < 0 || nextEscape < end)) {
      if (nextEscape + 1 >= text.length) {
        this.#escaped = true;
        return text.length;
      }
      return nextEscape + 2;
    }
    if (end < 0) return text.length;
    this.#inString = false;
    return end + 1;
  }
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Decodes a LIST body stream: each item goes through `decodeItem` as soon as it is complete. Returns
 * the decoded items and the list's other members.
 */
export async function readListBody<T>(
  body: AsyncIterable<Uint8Array>,
  decodeItem: (item: unknown) => T,
): Promise<{ items: T[]; list: Record<string, unknown> }> {
  const items: T[] = [];
  const decoder = new ListBodyDecoder((item) => items.push(decodeItem(item)));
  const text = new TextDecoder();
  for await (const chunk of body) decoder.write(text.decode(chunk, { stream: true }));
  decoder.write(text.decode());
  return { items, list: decoder.end() };
}
