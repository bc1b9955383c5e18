/**
 * Lease leader election with client-go's rules. A candidate retries every `retryPeriod` (jittered)
 * until the Lease is free or expired, then renews it every `retryPeriod`; a renewal round that finds
 * no success within `renewDeadline` loses leadership. Expiry is judged by the local time at which
 * the record was last seen to change, never by the remote `renewTime`, so clock skew does not matter.
 *
 * Unlike client-go, a waiting candidate also watches its Lease: it sees each change when it happens
 * (so a holder that stops renewing expires on time, not up to one jittered retry period late), tries
 * at once when the Lease is released or deleted, and tries again exactly when the observed holder
 * expires. Every attempt still reads the Lease and applies the same rules; the watch only decides
 * *when* to try. Without `watch` permission on Leases the candidate just polls.
 */
import type { Gauge } from 'prom-client';
import { isConflict, isForbidden, isNotFound } from '../client/api-error.ts';
import type { EventRecorder } from '../events/event-recorder.ts';
import { type Clock, realClock, sleep } from '../util/clock.ts';
import { LifecycleEvents, type LifecycleSink } from '../util/lifecycle-emitter.ts';
import { type Logger, silentLogger } from '../util/logger.ts';
import {
  jitterFactor,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  masterStatusGauge,
  validate,
} from './leader-elector-options.ts';
import type { LeaderElectorEvents } from './leader-events.ts';
import { LeaseDenials } from './lease-denial.ts';
import { LeaseFence } from './lease-fence.ts';
import { type LeaderElectionRecord, LeaseLock, type ObservedLeaseRecord } from './lease-lock.ts';
import { MicroTime } from './micro-time.ts';

export type { LeaderCallbacks, LeaderElectorOptions } from './leader-elector-options.ts';

/** How `run` ended: the signal was aborted, or a renewal round failed. */
export type LeaderElectionOutcome = 'cancelled' | 'lost';

/** Server-side timeout of the candidate's Lease watch; it is renewed after each normal close. */
const leaseWatchTimeoutSeconds = 300;

/**
 * One candidate in a Lease election. Emits the typed {@link LeaderElectorEvents} (`leading`,
 * `stoppedLeading`); a listener that throws is logged and never disturbs the election.
 */
export class LeaderElector extends LifecycleEvents<LeaderElectorEvents> {
  readonly #lock: LeaseLock;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #callbacks: LeaderCallbacks;
  readonly #recorder: EventRecorder | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #random: () => number;
  readonly #masterStatus: Gauge<'name'> | undefined;
  #observedRecord: LeaderElectionRecord | undefined;
  #observedRaw: string | undefined;
  /** Local time at which {@link #observedRecord} was set. */
  #observedTime = 0;
  #reportedLeader = '';
  /** Set by the Lease watch when it sees the Lease free; wakes the campaign. */
  #freeSeen = false;
  #wakeCampaign: (() => void) | undefined;
  #leading = false;
  #running = false;
  /** Monotonic time at which the last successful acquire or renew attempt started (before it sent anything). */
  #lastSuccessSentAt = Number.NEGATIVE_INFINITY;
  /** Wakes the renew loop from its pause between rounds, when a stall needs a renewal now. */
  #wakeRenewal: (() => void) | undefined;
  readonly #denials: LeaseDenials;
  readonly #events: LifecycleSink<LeaderElectorEvents>;

  /** Validates the options with client-go's rules; throws a `TypeError` or `RangeError` when they break one. */
  constructor(options: LeaderElectorOptions) {
    super();
    const { lock, callbacks } = options;
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 2_000;
    validate(this.#leaseDurationMs, this.#renewDeadlineMs, this.#retryPeriodMs);
    if (!lock.identity) throw new TypeError('leader election: identity must not be empty');
    if (!lock.name || !lock.namespace)
      throw new TypeError('leader election: lock name and namespace are required');
    if (
      typeof callbacks?.onStartedLeading !== 'function' ||
      typeof callbacks.onStoppedLeading !== 'function'
    ) {
      throw new TypeError('leader election: onStartedLeading and onStoppedLeading callbacks are required');
    }
    this.#lock = new LeaseLock(lock);
    this.#releaseOnCancel = options.releaseOnCancel ?? false;
    this.#callbacks = callbacks;
    this.#recorder = options.recorder;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? silentLogger).child({
      lease: this.#lock.describe(),
      identity: lock.identity,
    });
    this.#random = options.random ?? Math.random;
    this.#masterStatus = options.registry && masterStatusGauge(options.registry);
    this.#denials = new LeaseDenials(this.#clock, this.#logger, lock.namespace, lock.name);
    this.#events = this.lifecycleSink(this.#logger);
  }

  /**
   * Readiness: an error naming the missing verb and the RBAC rule while the last attempt on the Lease
   * was forbidden (403); `null` otherwise. A replica that may not use its Lease can never lead.
   */
  accessCheck(): Error | null {
    return this.#denials.check();
  }

  /** Whether this candidate currently leads (from acquisition until renewing stops). */
  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed in the Lease, `''` if none. */
  getLeader(): string {
    return this.#observedRecord?.holderIdentity ?? '';
  }

  /**
   * Health: an error once this leader has not renewed for `leaseDuration + maxTolerableExpiredLeaseMs`
   * (it is stuck and another candidate may lead by now); `null` when healthy or not leading.
   */
  healthCheck(maxTolerableExpiredLeaseMs = 0): Error | null {
    if (!this.#leading) return null;
    if (this.#clock.now() - this.#observedTime > this.#leaseDurationMs + maxTolerableExpiredLeaseMs) {
      return new Error(`leader election: failed to renew leadership on lease ${this.#lock.describe()}`);
    }
    return null;
  }

  /**
   * Campaigns until leading, leads until the lease is lost or `signal` aborts, then calls
   * `onStoppedLeading`. Resolves with how it ended, once the `onStartedLeading` work has settled;
   * never rejects for API failures.
   */
  async run(signal: AbortSignal): Promise<LeaderElectionOutcome> {
    if (this.#running) throw new Error('leader election: run() is already in progress');
    this.#running = true;
    try {
      if (!(await this.#acquire(signal))) return 'cancelled';
      return await this.#lead(signal);
    } finally {
      this.#running = false;
      this.#safely('onStoppedLeading', () => this.#callbacks.onStoppedLeading());
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#logger.info('Attempting to acquire leader lease');
    const campaign = new AbortController();
    void this.#watchLease(AbortSignal.any([signal, campaign.signal]));
    try {
      while (!signal.aborted) {
        this.#freeSeen = false;
        const acquired = await this.#tryAcquireOrRenew(signal);
        this.#reportTransition();
        if (acquired) {
          this.#leading = true;
          this.#masterStatus?.set({ name: this.#lock.name }, 1);
          this.#recordEvent('became leader');
          this.#logger.info('Successfully acquired lease');
          return true;
        }
        if (!(await this.#waitForNextAttempt(signal))) return false;
      }
      return false;
    } finally {
      campaign.abort();
    }
  }

  /**
   * Waits one jittered retry period, cut short when the watch sees the Lease free or when the
   * observed holder expires. False when `signal` aborts.
   */
  async #waitForNextAttempt(signal: AbortSignal): Promise<boolean> {
    if (this.#freeSeen) return true;
    let delay = this.#retryPeriodMs * (1 + this.#random() * jitterFactor);
    const untilExpiry = this.#untilObservedExpiry();
    // Only a future expiry shortens the wait: an attempt that failed after expiry must not spin.
    if (untilExpiry > 0) delay = Math.min(delay, untilExpiry);
    const woken = new AbortController();
    this.#wakeCampaign = () => woken.abort();
    try {
      await sleep(this.#clock, delay, AbortSignal.any([signal, woken.signal]));
    } catch {
      // Woken early, or cancelled: told apart below.
    } finally {
      this.#wakeCampaign = undefined;
    }
    return !signal.aborted;
  }

  /** Milliseconds until a non-empty foreign holder expires by local observation; 0 if none. */
  #untilObservedExpiry(): number {
    const observed = this.#observedRecord;
    if (observed === undefined || observed.holderIdentity === '' || this.#observedIsSelf()) return 0;
    return this.#observedTime + observed.leaseDurationSeconds * 1000 - this.#clock.now();
  }

  /**
   * Follows the Lease while campaigning, renewing the watch after it ends, until `signal` aborts.
   * Never rejects. A changed record counts as observed now, exactly as when an attempt reads it.
   */
  async #watchLease(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#lock.watch({ signal, timeoutSeconds: leaseWatchTimeoutSeconds }, (observed) => {
          if (signal.aborted) return;
          if (observed !== undefined && observed.raw !== this.#observedRaw) {
            this.#setObserved(observed.record);
            this.#observedRaw = observed.raw;
          }
          if (observed === undefined || observed.record.holderIdentity === '') {
            this.#freeSeen = true;
            this.#wakeCampaign?.();
          }
        });
      } catch (err) {
        if (signal.aborted) return;
        if (isForbidden(err)) {
          this.#logger.info({ err }, 'Cannot watch the lease; a released lease is noticed by polling only');
          return;
        }
        this.#logger.debug({ err }, 'Lease watch failed; watching again after the retry period');
      }
      await sleep(this.#clock, this.#retryPeriodMs, signal).catch(() => {});
    }
  }

  async #lead(signal: AbortSignal): Promise<LeaderElectionOutcome> {
    const leading = new AbortController();
    // Renewing stops once the work has drained after a cancel, or when a round fails or the fence lapses.
    const stopRenewing = new AbortController();
    const fence = new LeaseFence({
      clock: this.#clock,
      renewDeadlineMs: this.#renewDeadlineMs,
      retryPeriodMs: this.#retryPeriodMs,
      lease: this.#lock.describe(),
      onLapse: (reason) => {
        // At once, without waiting for a renew request in flight or the round's own deadline.
        leading.abort(reason);
        stopRenewing.abort(reason);
      },
      onStall: () => this.#wakeRenewal?.(),
    });
    fence.renewed(this.#lastSuccessSentAt);
    const ledSince = this.#clock.now();
    const lease = this.#lock.describe();
    const { identity } = this.#lock;
    this.#events.emit('leading', () => ({ lease, identity }));
    const work = this.#startLeading(leading.signal, fence);
    const onCancel = (): void => {
      leading.abort(signal.reason);
      void work.then(() => stopRenewing.abort());
    };
    if (signal.aborted) onCancel();
    else signal.addEventListener('abort', onCancel, { once: true });

    let outcome: LeaderElectionOutcome = 'cancelled';
    try {
      while (!stopRenewing.signal.aborted) {
        const renewed = await this.#renewRound(stopRenewing.signal);
        this.#reportTransition();
        if (renewed) fence.renewed(this.#lastSuccessSentAt);
        if (stopRenewing.signal.aborted) break;
        if (!renewed) {
          outcome = 'lost';
          break;
        }
        await this.#pauseBetweenRounds(stopRenewing.signal);
      }
    } finally {
      signal.removeEventListener('abort', onCancel);
    }
    // A lapse can end the loop anywhere (in a round, in the pause): it is a loss wherever it happened.
    if (fence.lost.aborted) outcome = 'lost';

    this.#leading = false;
    this.#masterStatus?.set({ name: this.#lock.name }, 0);
    if (outcome === 'lost') {
      this.#logger.info('Failed to renew lease, leadership lost');
      fence.lapse(new Error(`leader election: lost lease ${this.#lock.describe()}`));
      // Releasing while the work still runs would let a successor start beside it.
      await work;
    }
    fence.close();
    if (this.#releaseOnCancel) await this.#release();
    this.#recordEvent('stopped leading');
    this.#events.emit('stoppedLeading', () => ({
      lease,
      identity,
      reason: outcome === 'lost' ? 'leaseLost' : 'stopRequested',
      error: outcome === 'lost' ? toLossError(fence.lost.reason) : undefined,
      ledMs: this.#clock.now() - ledSince,
    }));
    return outcome;
  }

  /** One retry period between renew rounds, cut short when a stall needs a renewal now. */
  async #pauseBetweenRounds(stop: AbortSignal): Promise<void> {
    const woken = new AbortController();
    this.#wakeRenewal = () => woken.abort();
    try {
      await sleep(this.#clock, this.#retryPeriodMs, AbortSignal.any([stop, woken.signal]));
    } catch {
      // Woken or stopped: the loop tells them apart.
    } finally {
      this.#wakeRenewal = undefined;
    }
  }

  async #startLeading(signal: AbortSignal, leadership: LeaseFence): Promise<void> {
    try {
      await this.#callbacks.onStartedLeading(signal, leadership);
    } catch (err) {
      this.#logger.error({ err }, 'onStartedLeading failed');
    }
  }

  /** Retries every retry period until one attempt succeeds or the renew deadline passes. */
  async #renewRound(stop: AbortSignal): Promise<boolean> {
    const deadline = new AbortController();
    const cancelTimer = this.#clock.setTimer(
      () => deadline.abort(new Error('leader election: renew deadline exceeded')),
      this.#renewDeadlineMs,
    );
    const signal = AbortSignal.any([stop, deadline.signal]);
    try {
      while (!signal.aborted) {
        const started = this.#clock.now();
        if (await this.#tryAcquireOrRenew(signal)) return true;
        await sleep(this.#clock, started + this.#retryPeriodMs - this.#clock.now(), signal).catch(() => {});
      }
      return false;
    } finally {
      cancelTimer();
    }
  }

  /** One attempt to take or keep the lease; true when this candidate holds it afterwards. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    const acquired = await this.#attempt(now, signal);
    if (acquired) {
      this.#lastSuccessSentAt = now;
      this.#denials.succeeded();
    }
    return acquired;
  }

  async #attempt(now: number, signal: AbortSignal): Promise<boolean> {
    const wallNow = this.#clock.wallNow();
    const fresh: LeaderElectionRecord = {
      holderIdentity: this.#lock.identity,
      leaseDurationSeconds: Math.trunc(this.#leaseDurationMs / 1000),
      acquireTime: new MicroTime(wallNow),
      renewTime: new MicroTime(wallNow),
      leaseTransitions: 0,
    };

    // Fast path: a valid leader updates the object it last wrote without reading it first.
    const observed = this.#observedRecord;
    if (observed !== undefined && this.#observedIsSelf() && this.#leaseValid(now)) {
      const renewed = {
        ...fresh,
        acquireTime: observed.acquireTime,
        leaseTransitions: observed.leaseTransitions,
      };
      try {
        await this.#lock.update(renewed, { signal });
        this.#setObserved(renewed);
        return true;
      } catch (err) {
        if (this.#denials.failed('update', err)) return false;
        this.#logger.debug({ err }, 'Failed to update lease optimistically, falling back to slow path');
      }
    }

    let current: ObservedLeaseRecord;
    try {
      current = await this.#lock.get({ signal });
    } catch (err) {
      if (!isNotFound(err)) {
        if (!this.#denials.failed('get', err)) this.#logger.error({ err }, 'Error retrieving lease');
        return false;
      }
      try {
        await this.#lock.create(fresh, { signal });
      } catch (createErr) {
        if (this.#denials.failed('create', createErr)) return false;
        this.#logger.error({ err: createErr }, 'Error creating lease');
        return false;
      }
      this.#setObserved(fresh);
      return true;
    }

    if (current.raw !== this.#observedRaw) {
      this.#setObserved(current.record);
      this.#observedRaw = current.raw;
    }
    if (current.record.holderIdentity !== '' && this.#leaseValid(now) && !this.#observedIsSelf()) {
      this.#logger.trace({ holder: current.record.holderIdentity }, 'Lease is held by another candidate');
      return false;
    }

    const next: LeaderElectionRecord = this.#observedIsSelf()
      ? {
          ...fresh,
          acquireTime: current.record.acquireTime,
          leaseTransitions: current.record.leaseTransitions,
        }
      : { ...fresh, leaseTransitions: current.record.leaseTransitions + 1 };
    try {
      await this.#lock.update(next, { signal });
    } catch (err) {
      if (this.#denials.failed('update', err)) return false;
      // A conflict means another candidate wrote first: an expected race, not a fault.
      this.#logger[isConflict(err) ? 'debug' : 'error']({ err }, 'Failed to update lease');
      return false;
    }
    this.#setObserved(next);
    return true;
  }

  /**
   * Hands the lease over: an empty holder with a 1 s duration, transitions unchanged. Skipped unless
   * the freshly read Lease still names this candidate, so a successor is never overwritten.
   */
  async #release(): Promise<void> {
    const deadline = new AbortController();
    const cancelTimer = this.#clock.setTimer(() => deadline.abort(), this.#renewDeadlineMs);
    try {
      const current = await this.#lock.get({ signal: deadline.signal });
      if (!this.#observedIsSelf() || current.record.holderIdentity !== this.#lock.identity) return;
      const now = this.#clock.wallNow();
      const released: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: new MicroTime(now),
        renewTime: new MicroTime(now),
        leaseTransitions: current.record.leaseTransitions,
      };
      await this.#lock.update(released, { signal: deadline.signal });
      this.#setObserved(released);
      this.#logger.info('Released lease');
    } catch (err) {
      this.#logger[isNotFound(err) ? 'info' : 'error']({ err }, 'Failed to release lease');
    } finally {
      cancelTimer();
    }
  }

  #observedIsSelf(): boolean {
    return this.#observedRecord?.holderIdentity === this.#lock.identity;
  }

  #leaseValid(now: number): boolean {
    const durationMs = (this.#observedRecord?.leaseDurationSeconds ?? 0) * 1000;
    return this.#observedTime + durationMs > now;
  }

  #setObserved(record: LeaderElectionRecord): void {
    this.#observedRecord = record;
    this.#observedTime = this.#clock.now();
  }

  #reportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    if (holder === '') return;
    this.#logger.info({ leader: holder }, 'New leader elected');
    const { onNewLeader } = this.#callbacks;
    if (onNewLeader) this.#safely('onNewLeader', () => onNewLeader.call(this.#callbacks, holder));
  }

  #recordEvent(what: string): void {
    const lease = this.#lock.lease;
    this.#recorder?.event(
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: lease?.metadata ?? { name: this.#lock.name, namespace: this.#lock.namespace },
      },
      'Normal',
      'LeaderElection',
      `${this.#lock.identity} ${what}`,
    );
  }

  #safely(name: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#logger.error({ err }, `${name} failed`);
    }
  }
}

/** The reason the fence lapsed with (always an `Error` in practice), as an `Error`. */
function toLossError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
