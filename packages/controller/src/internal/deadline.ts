/** Per-call deadlines on the injected clock, so tests drive them with fake time. */
import type { Clock } from '../util/clock.ts';

/** The reason a deadline aborts with: a `DOMException` named `TimeoutError`, like `AbortSignal.timeout`. */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`operation timed out after ${ms} ms`, 'TimeoutError');
}

/**
 * Runs `fn` with a signal that aborts when `parent` aborts (with its reason) or, if `ms` > 0, after
 * `ms` on `clock`. The timer and the link to `parent` are dropped when `fn` settles. A listener
 * rather than `AbortSignal.any`, which tracks its sources through weak references that the
 * garbage collector must then process: this runs several times per claim.
 */
export async function withDeadline<T>(
  clock: Clock,
  ms: number,
  parent: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (!(ms > 0)) return fn(parent ?? new AbortController().signal);
  const controller = new AbortController();
  const cancel = clock.setTimer(() => controller.abort(timeoutReason(ms)), ms);
  const onParentAbort = (): void => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  try {
    return await fn(controller.signal);
  } finally {
    cancel();
    parent?.removeEventListener('abort', onParentAbort);
  }
}
