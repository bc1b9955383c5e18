/** Rejection of `ProvisionController.run` when the Lease was lost; the host decides whether to exit. */
import { hasBrand, markBranded } from './util/brand.ts';

const brand: unique symbol = Symbol.for('@kube-provisioner/controller/LeaderElectionLostError');

/** Leadership was lost: the controller stopped its workers. Go exits the process here; the library never does. */
export class LeaderElectionLostError extends Error {
  override readonly name = 'LeaderElectionLostError';
  /** The Lease, as `namespace/name`. */
  readonly lease: string;

  constructor(lease: string) {
    super(`leader election lost: lease ${lease}`);
    markBranded(this, brand);
    this.lease = lease;
  }
}

/** Whether `err` is a {@link LeaderElectionLostError} from any copy of this package. */
export function isLeaderElectionLostError(err: unknown): err is LeaderElectionLostError {
  return hasBrand(err, brand);
}
