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
export type { ControllerMetrics } from './controller/controller-metrics.ts';
export { createControllerMetrics } from './controller/controller-metrics.ts';
export {
  isLeaderElectionLostError,
  LeaderElectionLostError,
} from './controller/leader-election-lost-error.ts';
export type { ProvisionControllerOptions, RescheduleMode, SaveBackoff } from './controller/options.ts';
export { ConfigurationError, isConfigurationError } from './controller/options.ts';
export { IgnoredError, InfeasibleError, isIgnoredError, isInfeasibleError } from './errors.ts';
export type { EventRecorder, EventRecorderOptions, EventType } from './events/event-recorder.ts';
export { createEventRecorder } from './events/event-recorder.ts';
export type { Check, HealthServerOptions } from './http/health-server.ts';
export { HealthServer } from './http/health-server.ts';
export type { EventHandler, HandlerRegistration } from './informer/event-handler.ts';
export type { InformerFactoryOptions, InformerScope } from './informer/informer-factory.ts';
export { SharedInformerFactory } from './informer/informer-factory.ts';
export type { KeyFunc } from './informer/keys.ts';
export { deletionHandlingMetaNamespaceKey, metaNamespaceKey } from './informer/keys.ts';
export type { ReflectorOptions, ReflectorStats } from './informer/reflector.ts';
export { VeryShortWatchError } from './informer/reflector.ts';
export type { SharedInformerOptions } from './informer/shared-informer.ts';
export { SharedInformer } from './informer/shared-informer.ts';
export type { Indexers, IndexFunc, ReadonlyIndexer } from './informer/store.ts';
export { indexByNamespace, indexByUid, namespaceIndex, uidIndex } from './informer/store.ts';
export {
  DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  unwrapTombstone,
} from './informer/tombstone.ts';
export type { WaitForCacheSyncOptions } from './informer/wait-for-cache-sync.ts';
export { waitForCacheSync } from './informer/wait-for-cache-sync.ts';
export type {
  LeaderCallbacks,
  LeaderElectionOutcome,
  LeaderElectorOptions,
} from './leader-election/leader-elector.ts';
export { LeaderElector } from './leader-election/leader-elector.ts';
export { leaderIdentity } from './leader-election/leader-identity.ts';
export { leaseNameFor } from './leader-election/lease-name.ts';
export type { ProbeRegistry } from './provision-controller.ts';
export { ProvisionController } from './provision-controller.ts';
export type {
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from './provisioner.ts';
export type { BackoffOptions } from './util/backoff.ts';
export { Backoff, jitter } from './util/backoff.ts';
export type { Clock } from './util/clock.ts';
export { realClock } from './util/clock.ts';
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
export { DelayingQueue } from './workqueue/delaying-queue.ts';
export type { GetResult, WorkQueueOptions } from './workqueue/queue.ts';
export { WorkQueue } from './workqueue/queue.ts';
export type { RateLimiter } from './workqueue/rate-limiters.ts';
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from './workqueue/rate-limiters.ts';
export type { RateLimitingQueueOptions } from './workqueue/rate-limiting-queue.ts';
export { RateLimitingQueue } from './workqueue/rate-limiting-queue.ts';
export type { ProcessItem, WorkerPoolOptions } from './workqueue/worker-pool.ts';
export { runWorkers } from './workqueue/worker-pool.ts';
