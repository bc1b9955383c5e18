/**
 * Per-volume usage for provisioners whose volumes the kubelet cannot measure (directories of a
 * shared file system): Prometheus gauges named after kubelet's `kubelet_volume_stats_*`, one series
 * per volume the instance owns, filled by scans that are paced by an I/O budget and never run on the
 * provisioning path, and one Warning event on a claim each time its volume outgrows its request.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type { VolumeLabels } from './usage-gauges.ts';
export { UsageGauges, volumeStatsMetrics } from './usage-gauges.ts';
export type {
  MeasuredVolume,
  MeasureVolume,
  UsageMonitorOptions,
  UsageScan,
  VolumeUsage,
} from './usage-monitor.ts';
export { UsageMonitor, usageExceededReason, warnOnClaim } from './usage-monitor.ts';
export type { VolumeLister } from './volume-listing.ts';
export { listMeasuredVolumes, measuredVolumeOf } from './volume-listing.ts';
