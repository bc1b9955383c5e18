/**
 * Errors answered by the API server. Recognised by a registered symbol brand rather than
 * `instanceof`, so two copies of this package in one process agree.
 */
import type { V1Status } from '@kubernetes/client-node';
import { hasBrand, markBranded } from '../util/brand.ts';

const brand: unique symbol = Symbol.for('@kube-provisioner/controller/ApiError');

/** The API server answered with a non-success status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status code. */
  readonly statusCode: number;
  /** `Status.reason`, e.g. `NotFound`, `AlreadyExists`, `Conflict`, `Expired`. */
  readonly reason: string | undefined;
  /** The `Status` body, when the server sent one. */
  readonly status: V1Status | undefined;
  /** Seconds from a `Retry-After` header or `Status.details.retryAfterSeconds`. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    statusCode: number,
    message: string,
    init: { reason?: string; status?: V1Status; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    markBranded(this, brand);
    this.statusCode = statusCode;
    this.reason = init.reason ?? init.status?.reason;
    this.status = init.status;
    this.retryAfterSeconds = init.retryAfterSeconds ?? init.status?.details?.retryAfterSeconds;
  }

  /** Builds an error from a `Status` object (a failed call's body or a watch `ERROR` event). */
  static fromStatus(status: V1Status, fallbackCode = 500): ApiError {
    const init: { status: V1Status; reason?: string } = { status };
    if (status.reason !== undefined) init.reason = status.reason;
    return new ApiError(
      status.code ?? fallbackCode,
      status.message ?? status.reason ?? 'unknown error',
      init,
    );
  }
}

/** Whether `err` is an {@link ApiError} from any copy of this package. */
export function isApiError(err: unknown): err is ApiError {
  return hasBrand(err, brand);
}

/** 404. */
export function isNotFound(err: unknown): boolean {
  return isApiError(err) && err.statusCode === 404;
}

/** 409 with reason `AlreadyExists`. */
export function isAlreadyExists(err: unknown): boolean {
  return isApiError(err) && err.statusCode === 409 && err.reason === 'AlreadyExists';
}

/** 409 other than `AlreadyExists`: an optimistic-concurrency or precondition conflict. */
export function isConflict(err: unknown): boolean {
  return isApiError(err) && err.statusCode === 409 && err.reason !== 'AlreadyExists';
}

/** 410 Gone, or reason `Expired`: the requested resourceVersion is too old. */
export function isGone(err: unknown): boolean {
  return isApiError(err) && (err.statusCode === 410 || err.reason === 'Expired' || err.reason === 'Gone');
}

/** 429 Too Many Requests. */
export function isTooManyRequests(err: unknown): boolean {
  return isApiError(err) && err.statusCode === 429;
}

/** 403 Forbidden. */
export function isForbidden(err: unknown): boolean {
  return isApiError(err) && err.statusCode === 403;
}
