/**
 * {@link ApiError}s shaped like the API server's, for the fake and for tests that inject failures.
 */
import type { V1Status } from '@kubernetes/client-node';
import { ApiError } from '../client/api-error.ts';

/** `Status.reason` values the fake produces, and their HTTP codes. */
export type StatusReason =
  | 'BadRequest'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

const codes: Readonly<Record<StatusReason, number>> = {
  BadRequest: 400,
  Forbidden: 403,
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
};

/** The failure `Status` the API server sends for `reason`. */
export function failureStatus(reason: StatusReason, message: string): V1Status {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: codes[reason], reason, message };
}

/**
 * An {@link ApiError} as the real client reports it for `reason`, e.g.
 * `statusError('Conflict', 'the object has been modified')`.
 */
export function statusError(reason: StatusReason, message: string, retryAfterSeconds?: number): ApiError {
  const status = failureStatus(reason, message);
  if (retryAfterSeconds !== undefined) status.details = { retryAfterSeconds };
  return ApiError.fromStatus(status);
}
