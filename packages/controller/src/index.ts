/**
 * Write a Kubernetes dynamic volume provisioner: implement {@link Provisioner} and run it with a
 * {@link ProvisionController}. The machinery underneath has subpaths of its own: `/informer`,
 * `/workqueue`, `/events`, `/leader-election`, `/cli` and `/testing`.
 *
 * @packageDocumentation
 */
export {
  ApiError,
  isAlreadyExists,
  isApiError,
  isConflict,
  isForbidden,
  isGone,
  isNotFound,
  isTooManyRequests,
} from './client/api-error.ts';
export type { KubeApiClient, KubeApiOptions } from './client/kube-api.ts';
export { createKubeApi } from './client/kube-api.ts';
export type { RateLimit } from './client/request-limiter.ts';
export { defaultRateLimit } from './client/request-limiter.ts';
export type {
  CallOptions,
  DeleteOptions,
  KubeApi,
  KubeObject,
  ListOptions,
  NamespaceOption,
  ObjectList,
  PatchType,
  ResourceClient,
  ResourceDescriptor,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './client/resource-client.ts';
export { resources } from './client/resource-client.ts';
export type { RetryPolicy } from './client/retry.ts';
export { defaultRetryPolicy } from './client/retry.ts';
export {
  isLeaderElectionLostError,
  LeaderElectionLostError,
} from './controller/leader-election-lost-error.ts';
export type {
  DeletedEvent,
  DeleteFailedEvent,
  ProvisionControllerEvents,
  ProvisionedEvent,
  ProvisionFailedEvent,
  SyncedEvent,
} from './controller/lifecycle-events.ts';
export type {
  LeaseLossPolicy,
  ProvisionControllerOptions,
  RescheduleMode,
  SaveBackoff,
} from './controller/options.ts';
export { ConfigurationError, isConfigurationError } from './controller/options.ts';
export {
  IgnoredError,
  InfeasibleError,
  isIgnoredError,
  isInfeasibleError,
  isVolumeInUseError,
  VolumeInUseError,
} from './errors.ts';
export type { Check, HealthServerOptions } from './http/health-server.ts';
export { HealthServer } from './http/health-server.ts';
export type {
  LeadingEvent,
  StoppedLeadingEvent,
  StoppedLeadingReason,
} from './leader-election/leader-events.ts';
export { persistentVolumeFor } from './persistent-volume.ts';
export type { ProbeRegistry } from './provision-controller.ts';
export { ProvisionController } from './provision-controller.ts';
export type { ProvisionFailure } from './provision-failure.ts';
export { provisionFailure } from './provision-failure.ts';
export type {
  ClaimDataSource,
  DataSourceKind,
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from './provisioner.ts';
export type { BackoffOptions } from './util/backoff.ts';
export { Backoff } from './util/backoff.ts';
export type { Clock } from './util/clock.ts';
export { realClock } from './util/clock.ts';
export type { LifecycleEventMap } from './util/lifecycle-emitter.ts';
export type { LogFields, LogFn, Logger, LoggerOptions, LogLevel } from './util/logger.ts';
export { createLogger, levelForVerbosity, silentLogger } from './util/logger.ts';
export {
  annAlphaSelectedNode,
  annBetaStorageClass,
  annBetaStorageProvisioner,
  annDynamicallyProvisioned,
  annMigratedTo,
  annSelectedNode,
  annStorageProvisioner,
  finalizerPV,
} from './wire-names.ts';
