/**
 * Which volumes an nfs-subdir instance measures: the PVs this provisioner made whose `nfs.path` lies
 * below the export, each as its directory under the mount root. Only the leader runs maintenance, so
 * each volume is reported by one instance.
 */
import { storageBytes } from '@kube-provisioner/controller/client';
import { type MeasuredVolume, measuredVolumeOf } from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { normalizeBasePath, type RelativeVolumePath, relativePathUnder } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** An NFS volume to measure: its labels and request, and its directory below the export. */
export interface NfsVolume extends MeasuredVolume {
  readonly path: RelativeVolumePath;
}

/** The volume `pv` is, when `provisionerName` made it below `exportPath` and it is bound to a claim. */
export function ownedNfsVolume(
  pv: Readonly<V1PersistentVolume>,
  scope: { readonly provisionerName: string; readonly exportPath: string },
): NfsVolume | undefined {
  if (pv.metadata?.annotations?.[annDynamicallyProvisioned] !== scope.provisionerName) return undefined;
  const bytes = storageBytes(pv.spec?.capacity?.storage);
  const volume = measuredVolumeOf(pv, bytes === undefined ? undefined : Number(bytes));
  const path = pv.spec?.nfs?.path;
  if (volume === undefined || path === undefined) return undefined;
  try {
    return { ...volume, path: relativePathUnder(normalizeBasePath(scope.exportPath), path) };
  } catch {
    // Not below this export (edited by hand, or another server's): not this instance's to measure.
    return undefined;
  }
}
