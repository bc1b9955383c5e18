/**
 * The final-state-unknown tombstone: what a delete handler receives when an object vanished while the
 * informer was not watching (it was missing from a relist), so its real final state was never seen.
 */
import { hasBrand, markBranded } from '../util/brand.ts';

const brand: unique symbol = Symbol.for('@kube-provisioner/controller/DeletedFinalStateUnknown');

/** An object deleted without the informer seeing the deletion; `obj` is the last state it knew. */
export class DeletedFinalStateUnknown<T> {
  /** The object's store key (`namespace/name` or `name`). */
  readonly key: string;
  /** The last known state of the object, possibly stale. */
  readonly obj: T;

  constructor(key: string, obj: T) {
    markBranded(this, brand);
    this.key = key;
    this.obj = obj;
  }
}

/** Whether `value` is a {@link DeletedFinalStateUnknown} from any copy of this package. */
export function isDeletedFinalStateUnknown<T>(
  value: T | DeletedFinalStateUnknown<T>,
): value is DeletedFinalStateUnknown<T> {
  return hasBrand(value, brand);
}

/** The object itself, or the last known state inside a tombstone. */
export function unwrapTombstone<T>(value: T | DeletedFinalStateUnknown<T>): T {
  return isDeletedFinalStateUnknown(value) ? value.obj : value;
}
