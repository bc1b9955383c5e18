/**
 * Stale ownership records: a record whose claim and PV no longer exist. The upstream programs do
 * not know the records, so after a rollback to them (and forward again) a record can outlive the
 * volume it describes, sometimes with the directory gone. Such a record blocks nobody's live data:
 * it is released, like a volume kept by `onDelete: retain`, instead of being treated as foreign.
 */
import { isNotFound, type ResourceClient } from '@kube-provisioner/controller/client';
import type { OwnershipRecord } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';

/**
 * Reads claims and PVs straight from the API (`get`, and `list` of PVs before an adoption);
 * `ResourceClient`s fit.
 */
export interface OwnerLookup {
  readonly claims: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get'>;
  readonly volumes: Pick<ResourceClient<V1PersistentVolume>, 'get' | 'list'>;
}

async function exists(read: () => Promise<V1PersistentVolumeClaim | V1PersistentVolume>, uid?: string) {
  try {
    const found = await read();
    return uid === undefined || found.metadata?.uid === uid;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Whether neither the claim (by UID) nor the PV that `record` names exists any more. A claim being
 * deleted, or a PV waiting for its Delete, still counts as existing.
 */
export async function isStaleRecord(
  record: OwnershipRecord,
  lookup: OwnerLookup,
  signal: AbortSignal,
): Promise<boolean> {
  const claim = () => lookup.claims.get(record.claimName, { namespace: record.namespace, signal });
  if (await exists(claim, record.claimUid)) return false;
  return !(await exists(() => lookup.volumes.get(record.pvName, { signal })));
}

/** Why a claim cannot use a directory whose stale record was released, and how to clear it. */
export function releasedStaleDataMessage(path: string): string {
  return `${path} holds the data of a claim that no longer exists: its ownership record (.<dir>.kube-provisioner.json beside it) outlived that claim and its PV, e.g. across a rollback to the upstream image, and is now marked released; to reattach the data to this claim set the StorageClass parameter adoptExisting: "true" (claims of the namespace that made it only), or move the directory and its record away`;
}
