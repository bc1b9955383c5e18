/**
 * How this package emits its typed lifecycle events (issue 12): through `eventemitter3`, without
 * building a payload nobody listens to, and without letting a listener's exception reach the code
 * that emitted. A listener is the user's code; a bug in it must not fail a sync or kill the process.
 */
import type { EventEmitter } from 'eventemitter3';
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
