/**
 * Usage reporting of an installation serving several exports: one monitor (one set of gauges) for
 * the volumes of every export, each measured below its own export's mount.
 */
import type { MeasureVolume, UsageMonitor, VolumeLister } from '@kube-provisioner/controller/usage';
import { type FsOps, volumeUsageScanner } from '@kube-provisioner/safe-fs';
import type { NfsExportConfig } from './export-list.ts';
import type { NfsVolume } from './volume-usage.ts';

/** A volume to measure and the export it is on. */
export interface ExportVolume extends NfsVolume {
  /** The name of its export (`NFS_EXPORTS`). */
  readonly exportName: string;
}

/** Where the PVs are read, and the monitor measuring the volumes of every export. */
export interface SeveralExportsUsage {
  readonly monitor: UsageMonitor<ExportVolume>;
  readonly volumes: VolumeLister;
}

/** Measures an {@link ExportVolume} below the mount root of its export. */
export function exportVolumeScanner(
  exports: readonly NfsExportConfig[],
  fs?: FsOps,
): MeasureVolume<ExportVolume> {
  const scanners = new Map(exports.map((e) => [e.name, volumeUsageScanner(e.mountRoot, fs)]));
  return async (volume, scan) => {
    const scanner = scanners.get(volume.exportName);
    if (scanner === undefined) throw new Error(`no export is named ${volume.exportName}`);
    return scanner(volume, scan);
  };
}
