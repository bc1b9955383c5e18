/**
 * A source of time. Every time-dependent part of the controller (queues, leader election, the event
 * recorder, backoff) takes one, so tests can drive time without real delays.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds; returns a function that cancels it. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** The wall clock, backed by `Date.now` and unref'd `setTimeout`. Works with vitest fake timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

/**
 * Resolves after `ms` on `clock`, or rejects with the signal's reason when `signal` aborts first.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
