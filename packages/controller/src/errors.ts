/**
 * Error kinds a provisioner returns to steer the controller. Each is recognised by a registered
 * symbol brand and a type guard, never by `instanceof`, so two copies of this package agree.
 */

import { hasBrand, markBranded } from './util/brand.ts';

const ignoredBrand: unique symbol = Symbol.for('@kube-provisioner/controller/IgnoredError');
const infeasibleBrand: unique symbol = Symbol.for('@kube-provisioner/controller/InfeasibleError');
const volumeInUseBrand: unique symbol = Symbol.for('@kube-provisioner/controller/VolumeInUseError');

/**
 * "Not mine": from `provision`, the claim is dropped silently so another provisioner can take it;
 * from `delete`, nothing happens and the PV object is kept.
 */
export class IgnoredError extends Error {
  override readonly name = 'IgnoredError';
  readonly reason: string;

  constructor(reason: string) {
    super(`ignored because ${reason}`);
    markBranded(this, ignoredBrand);
    this.reason = reason;
  }
}

/** Whether `err` is an {@link IgnoredError} from any copy of this package. */
export function isIgnoredError(err: unknown): err is IgnoredError {
  return hasBrand(err, ignoredBrand);
}

/**
 * The request can never succeed as made (bad parameters, impossible size…). The controller emits a
 * `ProvisioningFailed` event and delays retries of the claim by `retryIntervalMax` until its
 * StorageClass is re-created.
 */
export class InfeasibleError extends Error {
  override readonly name = 'InfeasibleError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    markBranded(this, infeasibleBrand);
  }
}

/**
 * Whether `err` is infeasible: an {@link InfeasibleError} from any copy of this package, or any error
 * carrying gRPC code 3 (`InvalidArgument`) as CSI-style callers report it.
 */
export function isInfeasibleError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const record = err as Record<PropertyKey, unknown>;
  return record[infeasibleBrand] === true || record.code === 3;
}

/**
 * From `delete`: the volume cannot be deleted yet because it is still in use (say, attached to a node
 * while a workload and its claim are deleted together), and that will pass on its own (Go's
 * `VolumeInUseError`, v13.1.0). The controller retries with the usual backoff and failure threshold,
 * as for any error, but records a Normal `VolumeDelete` event instead of a Warning
 * `VolumeFailedDelete` one, logs at debug level, and counts the attempt neither as a failure nor as a
 * deletion. The message is `reason` as given.
 */
export class VolumeInUseError extends Error {
  override readonly name = 'VolumeInUseError';
  readonly reason: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    markBranded(this, volumeInUseBrand);
    this.reason = reason;
  }
}

/**
 * Whether `err` is a {@link VolumeInUseError} from any copy of this package. Only the error `delete`
 * rejects with counts, not one in its `cause` chain: Go matches the returned error's type alone.
 */
export function isVolumeInUseError(err: unknown): err is VolumeInUseError {
  return hasBrand(err, volumeInUseBrand);
}
