/**
 * Polls a condition of a phase's end state without failing the phase: the caller reports what did
 * not hold, with the rest of the run's findings.
 */
import { waitFor } from '@kube-provisioner/testenv';

/** Whether `condition` comes to hold within `timeoutMs` (polled every second). */
export async function holdsWithin(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  description: string,
): Promise<boolean> {
  try {
    await waitFor(condition, { timeoutMs, intervalMs: 1000, description });
    return true;
  } catch {
    return false;
  }
}
