import { SafeFsError } from './errors.ts';
import { isReservedName } from './reserved-names.ts';

declare const relativeVolumePathBrand: unique symbol;

/**
 * A path relative to a base directory that has passed {@link parseRelativeVolumePath}: one or more
 * `/`-separated segments, none empty, `.`, `..` or reserved, no backslash or control character,
 * each at most 255 bytes and 4096 bytes in all. Joining it onto a base always stays strictly below it.
 */
export type RelativeVolumePath = string & { readonly [relativeVolumePathBrand]: true };

const maxSegmentBytes = 255;
const maxPathBytes = 4096;
// C0 controls, DEL and C1 controls (U+0080-U+009F, e.g. U+0085 next line, U+009B control sequence
// introducer). NUL is refused by the kernel anyway; the others are legal in names but break log
// lines, events and terminals, and no sane pattern needs them.
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

// Invisible and direction-changing characters (Unicode "format" characters such as U+200B zero
// width space, U+202E right-to-left override, U+2066-U+2069 isolates, U+FEFF) and line/paragraph
// separators: legal in names, but they make two different paths look identical in events, logs
// and `ls`, which lets one tenant's volume pass for another's.
const invisibleCharacter = /[\p{Cf}\p{Zl}\p{Zp}]/u;

/** Why `input` is not a valid relative volume path, or `undefined` when it is. */
export function relativePathProblem(input: string): string | undefined {
  if (input === '') return 'it is empty';
  if (!input.isWellFormed()) return 'it is not well-formed Unicode';
  if (input.includes('\u0000')) return 'it contains a NUL character';
  if (hasControlCharacter(input)) return 'it contains a control character';
  if (invisibleCharacter.test(input)) return 'it contains an invisible or bidirectional formatting character';
  if (input.includes('\\')) return 'it contains a backslash';
  if (input.startsWith('/')) return 'it is absolute';
  if (Buffer.byteLength(input) > maxPathBytes) return `it is longer than ${maxPathBytes} bytes`;
  for (const segment of input.split('/')) {
    if (segment === '') return 'it has an empty segment';
    if (segment === '.' || segment === '..') return `it has a "${segment}" segment`;
    if (Buffer.byteLength(segment) > maxSegmentBytes)
      return `it has a segment longer than ${maxSegmentBytes} bytes`;
    if (isReservedName(segment))
      return `its segment ${JSON.stringify(segment)} is reserved for ownership records`;
  }
  return undefined;
}

/**
 * Validates `input` as it is, without cleaning it first: `a//b`, `./a`, `a/` and `a/../b` are refused
 * rather than normalised, so what is checked is exactly what is used.
 *
 * @throws {@link SafeFsError} of kind `invalid-path` naming the reason.
 */
export function parseRelativeVolumePath(input: string): RelativeVolumePath {
  const problem = relativePathProblem(input);
  if (problem !== undefined) {
    throw new SafeFsError({ kind: 'invalid-path', path: input, operation: 'validate path', detail: problem });
  }
  return input as RelativeVolumePath;
}
