/**
 * Which PVs an instance reports the usage of: those this provisioner made whose directory is under
 * its root, and in per-node mode only those on its own node. Each volume is so reported by exactly
 * one instance (the leader of a shared root, or the node's own instance).
 */
import type { OperationContext } from '@kube-provisioner/controller';
import {
  listMeasuredVolumes,
  type MeasuredVolume,
  measuredVolumeOf,
  type VolumeLister,
} from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { normalizeBasePath, type RelativeVolumePath, relativePathUnder } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { volumeNode, volumePath } from './persistent-volume.ts';
import type { ProvisionerMode } from './provisioner-mode.ts';
import { quantityBytes } from './storage-quantity.ts';

/** A hostpath volume to measure: its labels and request, and its directory under the root. */
export interface HostPathVolume extends MeasuredVolume {
  readonly path: RelativeVolumePath;
}

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
): HostPathVolume | undefined {
  if (pv.metadata?.annotations?.[annDynamicallyProvisioned] !== scope.provisionerName) return undefined;
  if (scope.mode === 'per-node' && volumeNode(pv) !== scope.nodeName) return undefined;
  const volume = measuredVolumeOf(pv, quantityBytes(pv.spec?.capacity?.storage));
  const path = volumePath(pv);
  if (volume === undefined || path === undefined) return undefined;
  try {
    return { ...volume, path: relativePathUnder(normalizeBasePath(scope.root), path) };
  } catch {
    // Not under this root (another instance's, or edited by hand): not this instance's to measure.
    return undefined;
  }
}

/** Every PV `scope` owns, from the API server's watch cache. */
export function listOwnedVolumes(
  lister: VolumeLister,
  scope: VolumeOwnerScope,
  context: Pick<OperationContext, 'signal'>,
): Promise<HostPathVolume[]> {
  return listMeasuredVolumes(lister, (pv) => ownedVolume(pv, scope), context);
}
