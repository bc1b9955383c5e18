/**
 * What Delete does with a volume's directory, and where that decision is recorded. The policy is
 * fixed at provision time and written onto the PV, so deleting or editing the StorageClass later
 * cannot change the fate of existing data.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** `delete`: remove the directory; `retain`: leave it; `archive`: rename it to `archived-…`. */
export type DeletePolicy = 'delete' | 'retain' | 'archive';

/** PV annotation holding the {@link DeletePolicy} chosen at provision time. */
export const annOnDelete = 'nfs.kube-provisioner.io/on-delete';

/**
 * PV annotation holding how long an archive of the volume is kept (a Go duration such as `720h`),
 * from the class's `archiveRetention` at provision time; absent: the provisioner's
 * `--archive-retention`, or forever.
 */
export const annArchiveRetention = 'nfs.kube-provisioner.io/archive-retention';

/** Every policy, in the order error messages list them. */
export const deletePolicies: readonly DeletePolicy[] = ['delete', 'retain', 'archive'];

/** `value` as a policy, or `undefined` when it is not one (policies are case-sensitive, as upstream). */
export function parseDeletePolicy(value: string): DeletePolicy | undefined {
  return deletePolicies.find((policy) => policy === value);
}

/**
 * The policy recorded on `pv`: `undefined` when it carries none (a PV made by an upstream
 * provisioner), `'invalid'` when the annotation was edited to something unknown.
 */
export function recordedDeletePolicy(pv: Readonly<V1PersistentVolume>): DeletePolicy | 'invalid' | undefined {
  const annotations = pv.metadata?.annotations;
  if (annotations === undefined || !Object.hasOwn(annotations, annOnDelete)) return undefined;
  return parseDeletePolicy(annotations[annOnDelete] ?? '') ?? 'invalid';
}
