/**
 * A token bucket with `golang.org/x/time/rate` reservation semantics: it starts full at `burst`,
 * refills continuously at `qps` up to `burst`, and a reservation always succeeds, borrowing a future
 * token when none is left; the returned delay is the time until that token exists.
 */
import { type Clock, realClock } from './clock.ts';

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  /** Tokens available at {@link #last}; negative when future tokens are borrowed. */
  #tokens: number;
  #last: number;

  /**
   * @param qps - tokens added per second; `Infinity` never delays.
   * @param burst - bucket size, at least 1 unless `qps` is `Infinity`.
   */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!(qps > 0)) throw new RangeError(`token bucket qps must be > 0, got ${qps}`);
    if (!(burst >= 1) && qps !== Number.POSITIVE_INFINITY) {
      throw new RangeError(`token bucket burst must be >= 1, got ${burst}`);
    }
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  /** Takes one token and returns how many milliseconds to wait before using it (0 = now). */
  reserve(): number {
    if (this.qps === Number.POSITIVE_INFINITY) return 0;
    this.#advance();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.qps) * 1000);
  }

  /** Takes a token only if one is available now. */
  tryTake(): boolean {
    if (this.qps === Number.POSITIVE_INFINITY) return true;
    this.#advance();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Tokens available now (may be negative while borrowed tokens are outstanding). */
  available(): number {
    this.#advance();
    return this.#tokens;
  }

  #advance(): void {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#last) / 1000;
    this.#tokens = Math.min(this.burst, this.#tokens + elapsed * this.qps);
    this.#last = now;
  }
}
