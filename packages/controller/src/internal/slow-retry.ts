/**
 * Claims whose provisioning failed with an infeasible error, and the StorageClass they failed with.
 * Retries of such a claim are refused until `windowMs` has passed or the class was re-created.
 */
import { type Clock, realClock } from '../util/clock.ts';

interface SlowRetryEntry {
  readonly since: number;
  readonly storageClassUid: string;
}

export class SlowRetrySet {
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #entries = new Map<string, SlowRetryEntry>();

  constructor(windowMs: number, clock: Clock = realClock) {
    this.#windowMs = windowMs;
    this.#clock = clock;
  }

  /** Records an infeasible failure of claim `uid` against the class with `storageClassUid`, now. */
  add(uid: string, storageClassUid: string): void {
    this.#entries.set(uid, { since: this.#clock.now(), storageClassUid });
  }

  /**
   * Milliseconds before claim `uid` may be retried against the class with `storageClassUid`; 0 when it
   * may be retried now. A different class UID means the class was re-created: the entry is dropped.
   */
  remaining(uid: string, storageClassUid: string): number {
    const entry = this.#entries.get(uid);
    if (entry === undefined) return 0;
    if (entry.storageClassUid !== storageClassUid) {
      this.#entries.delete(uid);
      return 0;
    }
    return Math.max(0, entry.since + this.#windowMs - this.#clock.now());
  }

  /** Drops every entry whose window has elapsed. */
  purgeExpired(): void {
    const now = this.#clock.now();
    for (const [uid, entry] of this.#entries) {
      if (entry.since + this.#windowMs <= now) this.#entries.delete(uid);
    }
  }

  /** Purges expired entries every window until `signal` aborts, so the set cannot grow without bound. */
  runPurge(signal: AbortSignal): void {
    if (signal.aborted) return;
    let cancel = (): void => {};
    const schedule = (): void => {
      cancel = this.#clock.setTimer(() => {
        this.purgeExpired();
        schedule();
      }, this.#windowMs);
    };
    signal.addEventListener('abort', () => cancel(), { once: true });
    schedule();
  }
}
