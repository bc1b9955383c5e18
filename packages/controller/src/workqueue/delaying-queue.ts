/**
 * A work queue that can add items after a delay, with client-go semantics. One unref'd timer tracks
 * the earliest ready time; it also fires at least every 10 s (client-go's heartbeat), so a wall-clock
 * jump cannot hold items back for long.
 */
import { WorkQueue } from './queue.ts';
import { ReadyTimeHeap } from './ready-time-heap.ts';

const heartbeat = 10_000;

/** A {@link WorkQueue} whose items can also be added after a delay (`addAfter`). */
export class DelayingQueue extends WorkQueue {
  readonly #waiting = new ReadyTimeHeap();
  #cancelTimer: (() => void) | undefined;
  /** When the armed timer fires. */
  #timerAt = Number.POSITIVE_INFINITY;

  /**
   * Adds `item` after `delay` milliseconds; `delay <= 0` adds it now. If `item` is already waiting,
   * the earlier ready time wins. Ignored after shutdown; otherwise counted in `workqueue_retries_total`.
   */
  addAfter(item: string, delay: number): void {
    if (this.shuttingDown()) return;
    this.metrics?.retry();
    if (delay <= 0) {
      this.add(item);
      return;
    }
    this.#waiting.schedule(item, this.clock.now() + delay);
    this.#arm();
  }

  /** Shuts down and drops the items still waiting for their delay. */
  override shutDown(): void {
    this.#stopWaiting();
    super.shutDown();
  }

  /** Drains like {@link WorkQueue.shutDownWithDrain} and drops the items still waiting for their delay. */
  override shutDownWithDrain(): Promise<void> {
    this.#stopWaiting();
    return super.shutDownWithDrain();
  }

  /** Arms the timer for the earliest ready time (or the heartbeat), unless it already fires sooner. */
  #arm(): void {
    const readyAt = this.#waiting.nextReadyAt();
    if (readyAt === undefined) return;
    const now = this.clock.now();
    const at = Math.min(readyAt, now + heartbeat);
    if (this.#cancelTimer !== undefined && this.#timerAt <= at) return;
    this.#cancelTimer?.();
    this.#timerAt = at;
    this.#cancelTimer = this.clock.setTimer(() => this.#release(), at - now);
  }

  /** Adds every item whose ready time has come, then re-arms for the rest. */
  #release(): void {
    this.#cancelTimer = undefined;
    const now = this.clock.now();
    for (let item = this.#waiting.popReady(now); item !== undefined; item = this.#waiting.popReady(now)) {
      this.add(item);
    }
    this.#arm();
  }

  #stopWaiting(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#waiting.clear();
  }
}
