/**
 * Which volumes an nfs-subdir instance measures: the PVs this provisioner made whose `nfs.path` lies
 * below the export, each as its directory under the mount root. Only the leader runs maintenance, so
 * each volume is reported by one instance.
 */
import type { OperationContext } from '@kube-provisioner/controller';
import { storageBytes } from '@kube-provisioner/controller/client';
import {
  listMeasuredVolumes,
  type MeasuredVolume,
  measuredVolumeOf,
  type UsageMonitor,
  type VolumeLister,
} from '@kube-provisioner/controller/usage';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { normalizeBasePath, type RelativeVolumePath, relativePathUnder } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** An NFS volume to measure: its labels and request, and its directory below the export. */
export interface NfsVolume extends MeasuredVolume {
  readonly path: RelativeVolumePath;
}

/** Whose volumes are measured: a provisioner name and the export its volumes lie below. */
export interface NfsVolumeScope {
  readonly provisionerName: string;
  readonly exportPath: string;
}

/** Usage reporting of an NFS provisioner: where the PVs are read, and the monitor that measures them. */
export interface NfsUsageReporting {
  readonly monitor: UsageMonitor<NfsVolume>;
  readonly volumes: VolumeLister;
}

/** Measures every volume of `scope` once and publishes the results (the leader's maintenance). */
export async function measureOwnedVolumes(
  usage: NfsUsageReporting,
  scope: NfsVolumeScope,
  context: OperationContext,
): Promise<void> {
  const volumes = await listMeasuredVolumes(usage.volumes, (pv) => ownedNfsVolume(pv, scope), context);
  await usage.monitor.refresh(volumes, context.signal, context.logger);
}

/** The volume `pv` is, when `scope.provisionerName` made it below the export and it is bound to a claim. */
export function ownedNfsVolume(
  pv: Readonly<V1PersistentVolume>,
  scope: NfsVolumeScope,
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
