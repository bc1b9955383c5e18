/**
 * Which PVs an instance reports the usage of: those this provisioner made whose directory is under
 * its root, and in per-node mode only those on its own node. Each volume is so reported by exactly
 * one instance (the leader of a shared root, or the node's own instance).
 */
import type { OperationContext } from '@kube-provisioner/controller';
import type { ResourceClient } from '@kube-provisioner/controller/client';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { normalizeBasePath, relativePathUnder } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ProvisionerMode } from './hostpath-provisioner.ts';
import { volumeNode, volumePath } from './persistent-volume.ts';
import { quantityBytes } from './storage-quantity.ts';
import type { MeasuredVolume } from './usage-monitor.ts';

/** Lists PVs (`persistentvolumes` `list`, which the controller's role already grants). */
export type VolumeLister = Pick<ResourceClient<V1PersistentVolume>, 'list'>;

/** The instance whose volumes are wanted. */
export interface VolumeOwnerScope {
  readonly mode: ProvisionerMode;
  readonly provisionerName: string;
  readonly root: string;
  readonly nodeName: string | undefined;
}

/** The volume `pv` is, when `scope` owns it and it is bound to a claim. */
export function ownedVolume(
  pv: Readonly<V1PersistentVolume>,
  scope: VolumeOwnerScope,
): MeasuredVolume | undefined {
  if (pv.metadata?.annotations?.[annDynamicallyProvisioned] !== scope.provisionerName) return undefined;
  if (scope.mode === 'per-node' && volumeNode(pv) !== scope.nodeName) return undefined;
  const claim = pv.spec?.claimRef;
  const path = volumePath(pv);
  if (claim?.name === undefined || path === undefined) return undefined;
  let relative: MeasuredVolume['path'];
  try {
    relative = relativePathUnder(normalizeBasePath(scope.root), path);
  } catch {
    // Not under this root (another instance's, or edited by hand): not this instance's to measure.
    return undefined;
  }
  return {
    pvName: pv.metadata?.name ?? '',
    namespace: claim.namespace ?? '',
    claimName: claim.name,
    claimUid: claim.uid,
    path: relative,
    requestedBytes: quantityBytes(pv.spec?.capacity?.storage),
  };
}

/**
 * Every PV `scope` owns, read page by page from the API server's watch cache (`resourceVersion=0`):
 * a cheap read, however often it runs.
 */
export async function listOwnedVolumes(
  lister: VolumeLister,
  scope: VolumeOwnerScope,
  context: Pick<OperationContext, 'signal'>,
): Promise<MeasuredVolume[]> {
  const owned: MeasuredVolume[] = [];
  let next: string | undefined;
  do {
    const page = await lister.list({
      signal: context.signal,
      limit: 500,
      ...(next === undefined ? { resourceVersion: '0' } : { continue: next }),
    });
    for (const pv of page.items) {
      const volume = ownedVolume(pv, scope);
      if (volume !== undefined) owned.push(volume);
    }
    next = page.metadata.continue || undefined;
  } while (next !== undefined);
  return owned;
}
