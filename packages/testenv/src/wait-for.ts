/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Pause between attempts. */
  readonly intervalMs?: number;
  /** What is awaited, for the timeout error. */
  readonly description: string;
}

/**
 * Polls `condition` until it returns a value other than `undefined` or `false`, and resolves with it.
 * Rejects when the deadline passes (naming the last error `condition` threw) or when `condition`
 * throws an error marked fatal with {@link stopWaiting}.
 */
export async function waitFor<T>(
  condition: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitForOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof StopWaiting) throw err.cause;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const because = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${options.timeoutMs}ms waiting for ${options.description}${because}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

class StopWaiting extends Error {}

/** Wraps an error so that {@link waitFor} rethrows it at once instead of retrying. */
export function stopWaiting(cause: Error): Error {
  return new StopWaiting(cause.message, { cause });
}
