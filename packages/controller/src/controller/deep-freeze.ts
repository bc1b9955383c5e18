/** Deep-frozen copies of cached objects, handed to provisioners so they cannot corrupt the informer cache. */

/**
 * Copies already made, by the cached object they copy. A cached object is never changed (an update
 * replaces it), so its copy stays valid for as long as it lives: one claim is handed to
 * `shouldProvision` and `provision`, and a class to every provision of its claims, without a new
 * copy each time.
 */
const copies = new WeakMap<object, unknown>();

/** A deep clone of `value` with every nested object and array frozen; the same clone for the same object. */
export function frozenClone<T>(value: T): Readonly<T> {
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known as Readonly<T>;
  const copy = deepFreeze(structuredClone(value));
  copies.set(value, copy);
  return copy;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}
