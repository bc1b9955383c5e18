/**
 * Write a Kubernetes dynamic volume provisioner: implement {@link Provisioner} and run it with a
 * {@link ProvisionController}. This entry holds what a provisioner author needs; everything else is
 * one import deeper: `/provisioner` (the whole contract, `DataSourceKind` and `ProvisionFailure`
 * included), `/client` (the Kubernetes API client, `resources`), `/logging` (`createLogger`),
 * `/health`, `/lifecycle` (`ProvisionControllerEvents` and their payloads), `/options` (types of its
 * options), `/wire-names`, and the machinery `/informer`, `/workqueue`, `/events`,
 * `/leader-election`, `/usage`, `/cli` and `/testing`.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

export { createKubeApi } from './client/kube-api.ts';
export type { KubeApi } from './client/resource-client.ts';
export { ConfigurationError, isConfigurationError } from './configuration-error.ts';
export {
  IgnoredError,
  InfeasibleError,
  isIgnoredError,
  isInfeasibleError,
  isVolumeInUseError,
  VolumeInUseError,
} from './errors.ts';
export { isLeaderElectionLostError, LeaderElectionLostError } from './leader-election-lost-error.ts';
export { persistentVolumeFor } from './persistent-volume.ts';
export { ProvisionController } from './provision-controller.ts';
export type { ProvisionControllerOptions } from './provision-controller-options.ts';
export { provisionFailure } from './provision-failure.ts';
export type {
  ClaimDataSource,
  ExpandOptions,
  ExpandResult,
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from './provisioner.ts';
export type { Logger } from './util/logger.ts';
