/**
 * Helpers shared by the scenarios: a deadline that scales with the work, and a progress bar fed from
 * a counter while a phase runs.
 */
import { startProgress } from './progress.ts';

/** Time a phase of `items` API objects may take: generous, since a stuck run must end, not a slow one. */
export function phaseTimeoutMs(items: number): number {
  return 120_000 + items * 500;
}

/** Deadline of a phase of `items` API objects ({@link phaseTimeoutMs}). */
export function phaseDeadline(items: number): AbortSignal {
  return AbortSignal.timeout(phaseTimeoutMs(items));
}

/** Shows `count()` against `total` until `work` settles, and returns its result. */
export async function withProgress<T>(
  label: string,
  total: number,
  count: () => number,
  work: Promise<T>,
): Promise<T> {
  const bar = startProgress(label, total);
  bar.update(count());
  const timer = setInterval(() => bar.update(count()), 250);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    bar.update(count());
    bar.done();
  }
}
