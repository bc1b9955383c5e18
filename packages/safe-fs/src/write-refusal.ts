/**
 * Errors thrown by a caller's write guard are remembered here, so that the system-error wrapping
 * passes them through as they are. A module of its own: both the guard and the error wrapping use
 * it, and neither may import the other.
 */

const refusals = new WeakSet<object>();

/** Marks `err`, thrown by a write guard, as a refusal. */
export function markWriteRefusal(err: unknown): void {
  if (typeof err === 'object' && err !== null) refusals.add(err);
}

/** Whether `err` was thrown by a write guard. */
export function isWriteRefusal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && refusals.has(err);
}
