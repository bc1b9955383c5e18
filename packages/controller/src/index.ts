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
export { IgnoredError, InfeasibleError, isIgnoredError, isInfeasibleError } from './errors.ts';
export type {
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from './provisioner.ts';
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
