/** The result a provisioner returns when its own attempt failed and nothing is left running. */
import { InfeasibleError, isIgnoredError, isInfeasibleError } from './errors.ts';
import type { ProvisionFailure } from './provisioner.ts';

/**
 * Turns what a provisioner caught into a `Finished` failure: `IgnoredError`s and infeasible errors
 * pass unchanged, errors `isInfeasible` accepts become an {@link InfeasibleError} (same message,
 * original as `cause`) so the controller slows its retries, and anything else is returned as an
 * `Error` (non-errors wrapped). `Finished` says no operation is left in flight: right for
 * provisioners that do their work synchronously inside `provision`.
 */
export function provisionFailure(
  err: unknown,
  isInfeasible: (err: unknown) => boolean = () => false,
): ProvisionFailure {
  return { error: steer(err, isInfeasible), state: 'Finished' };
}

function steer(err: unknown, isInfeasible: (err: unknown) => boolean): Error {
  if (isIgnoredError(err) || isInfeasibleError(err)) return err as Error;
  const error = err instanceof Error ? err : new Error(String(err));
  return isInfeasible(err) ? new InfeasibleError(error.message, { cause: err }) : error;
}
