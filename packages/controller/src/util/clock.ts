/**
 * A source of time. Every time-dependent part of the controller (queues, leader election, the event
 * recorder, backoff) takes one, so tests can drive time without real delays.
 *
 * Two readings, for two purposes: {@link Clock.now} measures durations (Lease expiry, renew
 * deadlines, backoff, rate limits, timeouts) and never steps when an administrator or NTP sets the
 * system time; {@link Clock.wallNow} is only for timestamps written to the API (Lease
 * `renewTime`/`acquireTime`, Event timestamps), which other processes compare with their own
 * wall clocks.
 */
export interface Clock {
  /**
   * Monotonic milliseconds: only differences mean anything. Never goes backwards and never jumps
   * when the wall clock is set.
   */
  now(): number;
  /** Milliseconds since the Unix epoch (the wall clock), for timestamps written to the API. */
  wallNow(): number;
  /**
   * Runs `fn` after `ms` milliseconds; returns a function that cancels it. Timers never keep the
   * process alive on their own: whoever needs the process to stay up holds it open on purpose
   * (`ProvisionController.run` does, for as long as it runs).
   */
  setTimer(fn: () => void, ms: number): () => void;
}

/**
 * The system clocks: `performance.now()` (monotonic, offset by `performance.timeOrigin` so that
 * readings are on the epoch's scale at start-up) for durations, `Date.now()` for timestamps, and
 * unref'd `setTimeout` for timers. Works with vitest fake timers.
 */
export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  wallNow: () => Date.now(),
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
