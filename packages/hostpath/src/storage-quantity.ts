/**
 * A PV's or claim's storage size as a number of bytes, for quota limits and usage gauges (exact
 * below 2^53 bytes, 8 PiB). Parsing is the controller's `storageBytes`.
 */
import { storageBytes } from '@kube-provisioner/controller/client';

/** The bytes `quantity` stands for, rounded up; `undefined` when absent, malformed or negative. */
export function quantityBytes(quantity: string | undefined): number | undefined {
  const bytes = storageBytes(quantity);
  return bytes === undefined ? undefined : Number(bytes);
}
