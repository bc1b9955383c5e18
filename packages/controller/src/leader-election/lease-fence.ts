/**
 * The leader's own view of its Lease, used as a fence. A peer takes the Lease over no
 * sooner than `leaseDuration` after it last saw the record change, and it cannot have seen a renewal
 * before that renewal was sent. So a leader whose last successful renewal was *sent* at `t` is safe
 * until `t + leaseDuration` on any peer's clock; the fence closes earlier, at
 * `validUntil = t + renewDeadline`, which leaves `leaseDuration - renewDeadline` (5 s with the
 * defaults) for the last side effect to reach the API server or the storage backend.
 *
 * The fence also closes when the event loop was stalled for longer than the retry period (SIGSTOP,
 * a long GC pause, CPU starvation, a suspended VM), measured on both the monotonic and the wall
 * clock so that a suspend the monotonic clock does not count is noticed too; it reopens only with a
 * renewal sent after the stall. Every check is synchronous and reads the clocks, so it is right even
 * when I/O callbacks run before the timers after a freeze.
 */
import { hasBrand, markBranded } from '../util/brand.ts';
import type { Clock } from '../util/clock.ts';

const brand: unique symbol = Symbol.for('@kube-provisioner/controller/LeadershipLapsedError');

/**
 * This replica's view of its Lease is no longer fresh enough to act on (`validUntil` passed, the
 * Lease was lost, or the process was frozen). A step that gets it must be abandoned: no retry count,
 * no event; a successor does the work.
 */
export class LeadershipLapsedError extends Error {
  override readonly name = 'LeadershipLapsedError';

  constructor(message: string) {
    super(message);
    markBranded(this, brand);
  }
}

/** Whether `err` is a {@link LeadershipLapsedError} from any copy of this package. */
export function isLeadershipLapsedError(err: unknown): err is LeadershipLapsedError {
  return hasBrand(err, brand);
}

/**
 * One term of leadership as the work sees it. Handed to `onStartedLeading`; the controller exposes it
 * to provisioners through `OperationContext.assertLeader`.
 */
export interface Leadership {
  /**
   * Aborts only when leadership is lost or lapses (never on a requested, graceful stop): work in
   * flight must stop at once. Fires from a timer at `validUntil`, so after a freeze it can come later
   * than I/O callbacks; {@link Leadership.assertLeader} is the exact check.
   */
  readonly lost: AbortSignal;
  /** Whether a side effect may be started now: the fence is open. */
  isValid(): boolean;
  /** Throws a {@link LeadershipLapsedError} unless {@link Leadership.isValid}. Call it immediately before acting. */
  assertLeader(): void;
}

/** Options of {@link LeaseFence}. */
export interface LeaseFenceOptions {
  readonly clock: Clock;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Called once when the fence lapses for good (`validUntil` passed). */
  readonly onLapse: (reason: Error) => void;
  /** Called when a stall closed the fence: a renewal should be attempted at once. */
  readonly onStall: () => void;
  /** Names the Lease in error messages. */
  readonly lease: string;
}

/** The fence of one leadership term: opened by {@link LeaseFence.renewed}, closed for good by a lapse. */
export class LeaseFence implements Leadership {
  readonly #options: LeaseFenceOptions;
  readonly #lost = new AbortController();
  readonly #tickMs: number;
  #validUntil = Number.NEGATIVE_INFINITY;
  /** A stall was seen after the last renewal was sent; open again only after a newer one. */
  #stalledAt: number | undefined;
  #lastTick: { mono: number; wall: number };
  #cancelExpiry: () => void = () => {};
  #cancelTick: () => void = () => {};

  constructor(options: LeaseFenceOptions) {
    this.#options = options;
    // Ticks often enough that a stall of one retry period stands out from normal timer lateness.
    this.#tickMs = Math.max(50, Math.floor(options.retryPeriodMs / 4));
    this.#lastTick = this.#readClocks();
    this.#scheduleTick();
  }

  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /** A renewal sent at `sentAt` (monotonic) succeeded: valid until `sentAt + renewDeadline`. */
  renewed(sentAt: number): void {
    if (this.#lost.signal.aborted) return;
    this.#noteStall();
    if (this.#stalledAt !== undefined && sentAt <= this.#stalledAt) return;
    this.#stalledAt = undefined;
    this.#validUntil = Math.max(this.#validUntil, sentAt + this.#options.renewDeadlineMs);
    this.#cancelExpiry();
    this.#cancelExpiry = this.#options.clock.setTimer(
      () => this.lapse(new LeadershipLapsedError(this.#expiredMessage())),
      this.#validUntil - this.#options.clock.now(),
    );
  }

  isValid(): boolean {
    if (this.#lost.signal.aborted) return false;
    this.#noteStall();
    if (this.#stalledAt !== undefined) return false;
    if (this.#options.clock.now() >= this.#validUntil) {
      this.lapse(new LeadershipLapsedError(this.#expiredMessage()));
      return false;
    }
    return true;
  }

  assertLeader(): void {
    if (this.isValid()) return;
    const reason: unknown = this.#lost.signal.reason;
    throw isLeadershipLapsedError(reason)
      ? reason
      : new LeadershipLapsedError(
          `leadership of lease ${this.#options.lease} is not confirmed (stalled process)`,
        );
  }

  /** Closes the fence for good and aborts {@link lost}. Idempotent. */
  lapse(reason: Error): void {
    if (this.#lost.signal.aborted) return;
    this.#cancelExpiry();
    this.#cancelTick();
    const lapsed = isLeadershipLapsedError(reason) ? reason : new LeadershipLapsedError(reason.message);
    this.#lost.abort(lapsed);
    this.#options.onLapse(lapsed);
  }

  /** Stops the timers without lapsing (leadership ended normally). */
  close(): void {
    this.#cancelExpiry();
    this.#cancelTick();
  }

  #expiredMessage(): string {
    return `lease ${this.#options.lease} not renewed within the renew deadline (${this.#options.renewDeadlineMs} ms)`;
  }

  #scheduleTick(): void {
    this.#cancelTick = this.#options.clock.setTimer(() => {
      this.#noteStall();
      this.#lastTick = this.#readClocks();
      this.#scheduleTick();
    }, this.#tickMs);
  }

  /** Records a stall if the clocks moved much further than one tick since the last tick ran. */
  #noteStall(): void {
    const now = this.#readClocks();
    const allowed = this.#tickMs + this.#options.retryPeriodMs;
    const gap = Math.max(now.mono - this.#lastTick.mono, now.wall - this.#lastTick.wall);
    if (gap <= allowed) return;
    // Counted once per stall: the next tick starts a new measurement.
    this.#lastTick = now;
    if (now.mono >= this.#validUntil) return;
    this.#stalledAt = now.mono;
    this.#options.onStall();
  }

  #readClocks(): { mono: number; wall: number } {
    return { mono: this.#options.clock.now(), wall: this.#options.clock.wallNow() };
  }
}
