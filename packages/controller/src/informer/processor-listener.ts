/**
 * One registered handler with its own unbounded buffer and delivery loop, so a slow handler delays
 * only itself, and its own resync schedule.
 */
import type { Logger } from '../util/logger.ts';
import { Deque } from './deque.ts';
import type { EventHandler, HandlerRegistration } from './event-handler.ts';
import type { DeletedFinalStateUnknown } from './tombstone.ts';

/** A change to deliver to a handler. */
export type Notification<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly type: 'update'; readonly oldObj: T; readonly newObj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };

/** Shortest handler resync period; shorter requests are raised to it. */
export const minimumResyncPeriod = 1000;

/**
 * The effective resync period of a handler asking for `desired` on an informer that checks every
 * `check`: none when either is 0, never below `check`.
 */
export function effectiveResyncPeriod(desired: number, check: number): number {
  if (desired === 0 || check === 0) return 0;
  return Math.max(desired, check);
}

/** Delivers notifications to one {@link EventHandler}. */
export class ProcessorListener<T> implements HandlerRegistration {
  readonly requestedResyncPeriod: number;
  resyncPeriod: number;
  #nextResync: number;
  readonly #handler: EventHandler<T>;
  readonly #upstreamHasSynced: () => boolean;
  readonly #onRemove: (listener: ProcessorListener<T>) => void;
  readonly #logger: Logger;
  readonly #buffer = new Deque<Notification<T>>(1024);
  /** Initial-list adds queued or being delivered. */
  #pendingInitial = 0;
  #delivering = false;
  #removed = false;

  constructor(init: {
    handler: EventHandler<T>;
    requestedResyncPeriod: number;
    resyncPeriod: number;
    now: number;
    upstreamHasSynced: () => boolean;
    onRemove: (listener: ProcessorListener<T>) => void;
    logger: Logger;
  }) {
    this.#handler = init.handler;
    this.requestedResyncPeriod = init.requestedResyncPeriod;
    this.resyncPeriod = init.resyncPeriod;
    this.#nextResync = init.now + init.resyncPeriod;
    this.#upstreamHasSynced = init.upstreamHasSynced;
    this.#onRemove = init.onRemove;
    this.#logger = init.logger;
  }

  /** Queues a notification; delivery starts on a later microtask. */
  add(notification: Notification<T>): void {
    if (this.#removed) return;
    if (notification.type === 'add' && notification.isInInitialList) this.#pendingInitial += 1;
    this.#buffer.push(notification);
    if (this.#delivering) return;
    this.#delivering = true;
    queueMicrotask(() => void this.#deliverAll());
  }

  /** Bound, so it can be passed around as a function. */
  readonly hasSynced: () => boolean = () => this.#upstreamHasSynced() && this.#pendingInitial === 0;

  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    this.#buffer.clear();
    this.#onRemove(this);
  }

  /** Whether this handler's resync is due at `now`. */
  resyncDue(now: number): boolean {
    return this.resyncPeriod > 0 && now >= this.#nextResync;
  }

  scheduleNextResync(now: number): void {
    this.#nextResync = now + this.resyncPeriod;
  }

  async #deliverAll(): Promise<void> {
    for (let next = this.#buffer.shift(); next !== undefined && !this.#removed; next = this.#buffer.shift()) {
      try {
        const result = this.#deliver(next);
        if (result !== undefined) await result;
      } catch (err) {
        this.#logger.error({ err, notification: next.type }, 'informer event handler failed');
      } finally {
        if (next.type === 'add' && next.isInInitialList) this.#pendingInitial -= 1;
      }
    }
    this.#delivering = false;
  }

  #deliver(notification: Notification<T>): void | Promise<void> {
    switch (notification.type) {
      case 'add':
        return this.#handler.onAdd?.(notification.obj, notification.isInInitialList);
      case 'update':
        return this.#handler.onUpdate?.(notification.oldObj, notification.newObj);
      case 'delete':
        return this.#handler.onDelete?.(notification.obj);
    }
  }
}
