/**
 * Waiting in tests without fixed sleeps: {@link settle} lets queued async work run, {@link pump} moves a
 * {@link ManualClock} forward in steps with async work between them, and {@link eventually} retries an
 * assertion until it holds (advancing a manual clock while it waits, if given one).
 */
import type { ManualClock } from './manual-clock.ts';

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Real time to keep trying, in milliseconds. Default 3000. */
  readonly timeoutMs?: number;
  /** Real time between attempts, in milliseconds. Default 5. */
  readonly intervalMs?: number;
  /**
   * A clock to advance by `stepMs` between attempts: a controller on a {@link ManualClock} only retries,
   * resyncs or backs off when its clock moves.
   */
  readonly clock?: ManualClock;
  /** Clock time per attempt, in milliseconds, with `clock`. Default 100. */
  readonly stepMs?: number;
}

/** Lets the work already queued (promise callbacks, I/O callbacks, timers due now) run: `turns` event-loop turns. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Advances `clock` by `ms` in steps of `step`, settling async work after each step. */
export async function pump(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += step) {
    clock.advance(step);
    await settle();
  }
}

/**
 * Calls `check` until it returns without throwing, and resolves to its result.
 *
 * @throws the last error of `check` once `timeoutMs` has passed.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 3000, intervalMs = 5, clock, stepMs = 100 } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (performance.now() >= deadline) throw err;
    }
    if (clock === undefined) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    else {
      await pump(clock, stepMs, stepMs);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
