/** The handler side of an informer: what consumers register and what they get back. */
import type { DeletedFinalStateUnknown } from './tombstone.ts';

/**
 * Callbacks for changes to cached objects. Calls to one handler never overlap and arrive in order;
 * a handler returning a promise is awaited before its next call. A throw or rejection is logged and
 * never stops the informer or other handlers. Objects are the cached instances: do not mutate them.
 */
export interface EventHandler<T> {
  /** `isInInitialList`: the object came with the initial list (or, for a late handler, was already cached). */
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** Also called with `oldObj` and `newObj` at the same resourceVersion on resync. */
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /** Receives a {@link DeletedFinalStateUnknown} when the deletion itself was missed. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/** A registered {@link EventHandler}. */
export interface HandlerRegistration {
  /** True once the informer has synced and this handler has received every object of the initial list. */
  hasSynced(): boolean;
  /** Stops delivery to this handler; notifications not yet delivered are dropped. */
  remove(): void;
}
