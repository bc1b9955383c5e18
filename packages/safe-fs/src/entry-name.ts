/**
 * Names as a directory listing gives them: text when they are valid UTF-8, raw bytes otherwise, so
 * that a name is never decoded into a different file's.
 */

/**
 * A name inside a directory: a string, or the raw bytes of a listed name that is not valid UTF-8
 * (decoding it would name a different file, or none).
 */
export type EntryName = string | Buffer;

/** `name` as text, for messages; names that are not UTF-8 show replacement characters. */
export function nameText(name: EntryName): string {
  return typeof name === 'string' ? name : name.toString('utf8');
}

/** A name as listed: text when it is valid UTF-8, its raw bytes otherwise (see {@link EntryName}). */
export function entryName(raw: Buffer): EntryName {
  const text = raw.toString('utf8');
  return Buffer.from(text).equals(raw) ? text : raw;
}
