/**
 * Write a Kubernetes dynamic volume provisioner: implement {@link Provisioner} and run it with a
 * {@link ProvisionController}. This entry holds what a provisioner author needs; everything else is
 * one import deeper: `/client` (the Kubernetes API client), `/logging`, `/health`, `/lifecycle`
 * (payloads of the controller's events), `/options` (types of its options), `/wire-names`, and the
 * machinery `/informer`, `/workqueue`, `/events`, `/leader-election`, `/cli` and `/testing`.
 *
 * @packageDocumentation
 */

export { createKubeApi } from './client/kube-api.ts';
export type { KubeApi } from './client/resource-client.ts';
export { resources } from './client/resource-client.ts';
export {
  isLeaderElectionLostError,
  LeaderElectionLostError,
} from './controller/leader-election-lost-error.ts';
export type { ProvisionControllerEvents } from './controller/lifecycle-events.ts';
export type { ProvisionControllerOptions } from './controller/options.ts';
export { ConfigurationError, isConfigurationError } from './controller/options.ts';
export {
  IgnoredError,
  InfeasibleError,
  isIgnoredError,
  isInfeasibleError,
  isVolumeInUseError,
  VolumeInUseError,
} from './errors.ts';
export { persistentVolumeFor } from './persistent-volume.ts';
export { ProvisionController } from './provision-controller.ts';
export type { ProvisionFailure } from './provision-failure.ts';
export { provisionFailure } from './provision-failure.ts';
export type {
  ClaimDataSource,
  DataSourceKind,
  ExpandOptions,
  ExpandResult,
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from './provisioner.ts';
export type { Logger } from './util/logger.ts';
export { createLogger } from './util/logger.ts';
