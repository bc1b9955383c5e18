/**
 * Which failed API requests are retried, and after how long. Follows client-go's `rest` client: a
 * server answer asking to come back later (429, or 5xx with `Retry-After`) is retried for every verb,
 * because the server did not act on it; a broken connection is retried only for reads, which are
 * idempotent, except a refused connection, where nothing reached the server.
 */
import { isApiError } from './api-error.ts';

/** Bounds of the retry loop of one call. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  readonly maxRetries: number;
  /** First backoff when the server gave no `Retry-After`; doubles per retry. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

/** 5 retries, backoff 0.5 s doubling to at most 8 s: a dead server fails a read within about 16 s. */
export const defaultRetryPolicy: RetryPolicy = Object.freeze({
  maxRetries: 5,
  initialDelayMs: 500,
  maxDelayMs: 8000,
});

/** Socket-level error codes that say the connection broke, not that the request was wrong. */
const transientCodes: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  // node:http2: the session or stream ended or was reset before the answer was complete.
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** The socket error code of `err` or of one of its causes (undici wraps them in `TypeError('fetch failed')`). */
export function networkErrorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && transientCodes.has(code)) return code;
    current = cause;
  }
  return undefined;
}

/** Whether `err` is a broken or refused connection rather than an answer from the server. */
export function isTransientNetworkError(err: unknown): boolean {
  return networkErrorCode(err) !== undefined;
}

/**
 * Milliseconds to wait before retry number `retry` (0-based) of a `method` request that failed with
 * `err`, or `undefined` when it must not be retried.
 */
export function retryDelay(
  err: unknown,
  method: string,
  retry: number,
  policy: RetryPolicy,
): number | undefined {
  if (retry >= policy.maxRetries) return undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** retry);
  if (isApiError(err)) {
    const askedToRetry =
      err.statusCode === 429 || (err.statusCode >= 500 && err.retryAfterSeconds !== undefined);
    if (!askedToRetry) return undefined;
    return err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : backoff;
  }
  const code = networkErrorCode(err);
  if (code === undefined) return undefined;
  return method === 'GET' || code === 'ECONNREFUSED' ? backoff : undefined;
}
