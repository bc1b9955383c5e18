/**
 * A {@link Clock} that only moves when told to, for tests of anything that waits: limiters, backoff,
 * timeouts, leader election.
 */
import type { Clock } from '../util/clock.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** A clock driven by {@link ManualClock.advance}; timers fire in due order, never on their own. */
export class ManualClock implements Clock {
  #now: number;
  /** How far the wall clock is set away from the monotonic one ({@link ManualClock.stepWall}). */
  #wallOffset = 0;
  #seq = 0;
  #timers: Timer[] = [];

  /** @param start - initial time in milliseconds since the epoch. */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#now + this.#wallOffset;
  }

  /** Sets the wall clock `ms` forward (negative: backward), as NTP or an administrator would; fires nothing. */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way at its own due time,
   * including timers those callbacks set. Work a timer starts asynchronously runs after this returns.
   */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (let next = this.#nextDue(end); next !== undefined; next = this.#nextDue(end)) {
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.fn();
    }
    this.#now = end;
  }

  /**
   * Moves time forward by `ms` without firing any timer, as a process frozen by SIGSTOP or a long
   * pause finds it on resuming: code that runs next reads the new time; due timers fire at the next
   * {@link advance}.
   */
  freeze(ms: number): void {
    this.#now += ms;
  }

  /** Number of timers set and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.length;
  }

  /** Due time of the earliest pending timer. */
  nextTimerAt(): number | undefined {
    return this.#nextDue(Number.POSITIVE_INFINITY)?.at;
  }

  #nextDue(end: number): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.#timers) {
      if (timer.at > end) continue;
      if (best === undefined || timer.at < best.at || (timer.at === best.at && timer.seq < best.seq)) {
        best = timer;
      }
    }
    return best;
  }
}
