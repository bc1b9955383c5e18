/** Waiting for informer caches before acting on them. */
import { type Clock, realClock, sleep } from '../util/clock.ts';

/** Options of {@link waitForCacheSync}. */
export interface WaitForCacheSyncOptions {
  signal: AbortSignal;
  clock?: Clock;
  /** Milliseconds between checks. Default 100, as client-go. */
  pollInterval?: number;
}

/**
 * Resolves `true` once every `hasSynced` answers true, checking every 100 ms, or `false` if the
 * signal aborts first. Pass informers' and handler registrations' `hasSynced`.
 */
export async function waitForCacheSync(
  options: AbortSignal | WaitForCacheSyncOptions,
  ...hasSynced: (() => boolean)[]
): Promise<boolean> {
  const {
    signal,
    clock = realClock,
    pollInterval = 100,
  } = options instanceof AbortSignal ? { signal: options } : options;
  while (!hasSynced.every((synced) => synced())) {
    try {
      await sleep(clock, pollInterval, signal);
    } catch {
      return false;
    }
  }
  return !signal.aborted;
}
