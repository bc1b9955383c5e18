/**
 * Runs async work over a list with at most a fixed number in flight, the way a controller's worker
 * pool does: the ceiling scenario must create PVs with exactly the provisioner's concurrency.
 */

/**
 * Calls `work` for every item, at most `concurrency` at a time, in list order. Rejects with the first
 * failure once the calls in flight have settled; items not started by then are skipped.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        await work(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}
