/** Deep-frozen copies of cached objects, handed to provisioners so they cannot corrupt the informer cache. */

/** A deep clone of `value` with every nested object and array frozen. */
export function frozenClone<T>(value: T): Readonly<T> {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}
