/** `err` as an `Error`, wrapping anything else that was thrown. */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
