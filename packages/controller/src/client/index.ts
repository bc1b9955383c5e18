/**
 * The Kubernetes API client the controller uses, for a provisioner's own calls: typed CRUD, list and
 * watch over HTTP/2, a client-side token bucket, 429/Retry-After handling, retries of idempotent
 * reads, per-request timeouts and aborts, and typed API errors.
 *
 * Stability: stable (see "Versioning" in the repository README).
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
} from './api-error.ts';
export type { ClusterSource, KubeApiClient, KubeApiOptions } from './kube-api.ts';
export { createKubeApi } from './kube-api.ts';
export { compareQuantities, quantityBytes, storageBytes } from './quantity.ts';
export type { RateLimit } from './request-limiter.ts';
export { defaultRateLimit } from './request-limiter.ts';
export type {
  CallOptions,
  DeleteOptions,
  KubeApi,
  KubeObject,
  ListOptions,
  NamespaceOption,
  ObjectList,
  PatchOptions,
  PatchType,
  ResourceClient,
  ResourceDescriptor,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './resource-client.ts';
export { resources } from './resource-client.ts';
export type { RetryPolicy } from './retry.ts';
export { defaultRetryPolicy } from './retry.ts';
