/** Per-call deadlines on the injected clock, so tests drive them with fake time. */
import type { Clock } from '../util/clock.ts';

/** The reason a deadline aborts with: a `DOMException` named `TimeoutError`, like `AbortSignal.timeout`. */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`operation timed out after ${ms} ms`, 'TimeoutError');
}

/**
 * Runs `fn` with a signal that aborts when `parent` aborts or, if `ms` > 0, after `ms` on `clock`.
 * The timer is cleared when `fn` settles.
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
  const signal = parent === undefined ? controller.signal : AbortSignal.any([parent, controller.signal]);
  try {
    return await fn(signal);
  } finally {
    cancel();
  }
}
