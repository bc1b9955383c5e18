/**
 * Splits a byte stream into text lines, the framing of a Kubernetes watch (one JSON object per line).
 */

/**
 * Yields the non-blank lines of `stream` as they complete. `onChunk` runs on every received chunk,
 * which lets a caller treat any traffic as a sign of life. A trailing line without newline is yielded
 * at the end of the stream.
 */
export async function* readLines(
  stream: AsyncIterable<Uint8Array>,
  onChunk: () => void = () => {},
): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let pending = '';
  // Leaving the loop early (return or throw) ends the iteration, which stops the underlying request.
  for await (const value of stream) {
    onChunk();
    pending += decoder.decode(value, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line !== '') yield line;
      newline = pending.indexOf('\n');
    }
  }
  const last = (pending + decoder.decode()).trim();
  if (last !== '') yield last;
}
