/**
 * Cloning claims (`dataSource` of kind PersistentVolumeClaim) for any provisioner whose volumes can
 * be copied: the source checks and external-provisioner's cloning-protection finalizer, and the
 * background copies the controller drives as the Go library's `ProvisioningInBackground`. The copy
 * itself is the provisioner's ({@link CloneVolumes}).
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type {
  CloneCopyOptions,
  CloneJobsOptions,
  CloneRequest,
  CloneStep,
  CloneVolumes,
} from './clone-jobs.ts';
export { CloneJobs, maxRunningClones } from './clone-jobs.ts';
export { type CloneResult, cloneMetricNames } from './clone-metrics.ts';
export type { CloneProgress } from './clone-progress.ts';
export type { CloneSource, CloneSourceAccess } from './clone-source.ts';
export { cloneSource, finalizerCloningProtection, protectSource, releaseSource } from './clone-source.ts';
