/**
 * How this package emits its typed lifecycle events: through `eventemitter3`, without
 * building a payload nobody listens to, and without letting a listener's exception reach the code
 * that emitted. A listener is the user's code; a bug in it must not fail a sync or kill the process.
 */
import { EventEmitter } from 'eventemitter3';
import type { Logger } from './logger.ts';

/** An event map in `eventemitter3`'s listener form: every event has one payload object. */
export type LifecycleEventMap<E> = { [K in keyof E]: (event: E[K]) => void };

/** The emitting side of a lifecycle emitter, as the code that does the work sees it. */
export interface LifecycleSink<E> {
  /**
   * Emits `event` with the payload `payload()` builds, which is called only when someone listens.
   * Never throws: a listener that throws is logged, and the listeners after it miss this one event.
   * Listeners are called synchronously; an `async` listener's promise is not awaited.
   */
  emit<K extends keyof E & string>(event: K, payload: () => E[K]): void;
}

/** The {@link LifecycleSink} of `emitter`, logging listener failures to `logger`. */
export function lifecycleSink<E>(
  emitter: EventEmitter<LifecycleEventMap<E>>,
  logger: Logger,
): LifecycleSink<E> {
  // The emitter's own type parameter is generic here; its listener signature is checked at `on`.
  const untyped = emitter as unknown as EventEmitter<string>;
  return {
    emit(event, payload) {
      if (untyped.listenerCount(event) === 0) return;
      try {
        untyped.emit(event, payload());
      } catch (err) {
        logger.error({ err, event }, 'A lifecycle event listener threw; carrying on');
      }
    },
  };
}

/**
 * What a class with typed lifecycle events offers its users: `on`, `off` and `once`, and nothing of
 * the emitter behind them (no `emit`, no `removeAllListeners`), so only the class itself emits.
 */
export abstract class LifecycleEvents<E> {
  readonly #emitter = new EventEmitter<LifecycleEventMap<E>>();

  /** Calls `listener` with the payload of every `event` from now on. */
  on<K extends keyof E & string>(event: K, listener: (payload: E[K]) => void): this {
    this.#listeners().on(event, listener);
    return this;
  }

  /** Stops calling `listener` for `event`. */
  off<K extends keyof E & string>(event: K, listener: (payload: E[K]) => void): this {
    this.#listeners().off(event, listener);
    return this;
  }

  /** Calls `listener` with the payload of the next `event` only. */
  once<K extends keyof E & string>(event: K, listener: (payload: E[K]) => void): this {
    this.#listeners().once(event, listener);
    return this;
  }

  /** The emitting side, for the subclass; listener failures go to `logger`. */
  protected lifecycleSink(logger: Logger): LifecycleSink<E> {
    return lifecycleSink(this.#emitter, logger);
  }

  // The emitter's event map is generic here; listeners are checked by the signatures above.
  #listeners(): EventEmitter<string> {
    return this.#emitter as unknown as EventEmitter<string>;
  }
}
