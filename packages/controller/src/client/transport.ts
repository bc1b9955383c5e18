/**
 * Authenticated HTTP requests to the API server with the client discipline of client-go: throttled
 * by a {@link RequestLimiter}, retried per {@link retryDelay}, bounded by a per-call timeout, and
 * cancellable. Requests go straight to one HTTP client per client (HTTP/2 where the server offers it;
 * {@link ClusterConnection}), with authentication and TLS resolved from `@kubernetes/client-node`'s
 * `KubeConfig` once rather than per request, so every kubeconfig form client-node supports works.
 */
import type { V1Status } from '@kubernetes/client-node';
import type { Clock } from '../util/clock.ts';
import { sleep } from '../util/clock.ts';
import { ApiError } from './api-error.ts';
import type { ClusterConnection } from './cluster-connection.ts';
import type { Exchange, HttpMethod } from './exchange.ts';
import type { RequestLimiter } from './request-limiter.ts';
import { type RetryPolicy, retryDelay } from './retry.ts';

/** One request, relative to the cluster's server URL. */
export interface HttpRequest {
  readonly method: HttpMethod;
  /** Path and query, e.g. `/api/v1/nodes?limit=5`. */
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly signal?: AbortSignal | undefined;
  /** Called right before each attempt is sent; see `CallOptions.beforeSend`. */
  readonly beforeSend?: (() => void) | undefined;
  /**
   * Fails the request when no response headers, or then no body data, arrive for this long. On an
   * HTTP/2 connection the client then PINGs the peer, sends new requests on a new connection, and
   * drops the silent one if the PING goes unanswered. Default: none on HTTP/2 (the call's own
   * deadline applies), undici's 300 s otherwise.
   */
  readonly idleTimeoutMs?: number;
}

/** Settings shared by the transports of one client. */
export interface TransportSettings {
  readonly clock: Clock;
  readonly retry: RetryPolicy;
  /** Deadline of one call including its retries; 0 = none. */
  readonly requestTimeoutMs: number;
  readonly userAgent: string;
}

/** A response whose body was read completely. */
export interface HttpResult<B = string> {
  readonly status: number;
  readonly body: B;
}

/**
 * Reads a 2xx response body. Called once per attempt, so a reader must keep no state between calls.
 * The default reads it as text.
 */
export type BodyReader<B> = (body: AsyncIterable<Uint8Array>) => Promise<B>;

const readText = (body: Exchange['body']): Promise<string> => body.text();

/** Sends requests for one client (one limiter). */
export class Transport {
  readonly #settings: TransportSettings;
  readonly #connection: ClusterConnection;
  readonly #limiter: RequestLimiter;

  constructor(settings: TransportSettings, connection: ClusterConnection, limiter: RequestLimiter) {
    this.#settings = settings;
    this.#connection = connection;
    this.#limiter = limiter;
  }

  /**
   * Sends a request and reads its body (with `readBody` when given), retrying per the retry policy. Rejects with an
   * {@link ApiError} for a non-2xx answer, a `TimeoutError` `DOMException` at the call deadline, the
   * signal's reason on abort, or the transport error.
   */
  async call(request: HttpRequest): Promise<HttpResult>;
  async call<B>(request: HttpRequest, readBody: BodyReader<B>): Promise<HttpResult<B>>;
  async call<B>(request: HttpRequest, readBody?: BodyReader<B>): Promise<HttpResult<B | string>> {
    const { clock, requestTimeoutMs, retry } = this.#settings;
    const controller = new AbortController();
    const unlink = linkSignal(request.signal, controller);
    const cancelTimer =
      requestTimeoutMs > 0
        ? clock.setTimer(() => {
            controller.abort(
              new DOMException(
                `${request.method} ${request.path} timed out after ${requestTimeoutMs} ms`,
                'TimeoutError',
              ),
            );
          }, requestTimeoutMs)
        : undefined;
    try {
      let reauthenticated = false;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.#limiter.wait(controller.signal);
          request.beforeSend?.();
          const response = await this.#send(request, controller.signal);
          if (response.statusCode < 300) {
            return { status: response.statusCode, body: await (readBody ?? readText)(response.body) };
          }
          const body = await response.body.text();
          // The cached credentials may have expired (a rotated or exec token): the server did not act,
          // so one immediate retry with freshly resolved ones is safe for every verb, as in client-go.
          if (response.statusCode === 401 && !reauthenticated) {
            reauthenticated = true;
            attempt--;
            continue;
          }
          throw apiErrorFromResponse(response.statusCode, flatHeaders(response.headers), body);
        } catch (err) {
          if (controller.signal.aborted) throw controller.signal.reason;
          const delay = retryDelay(err, request.method, attempt, retry);
          if (delay === undefined) throw err;
          await sleep(clock, delay, controller.signal);
        }
      }
    } catch (err) {
      throw controller.signal.aborted ? controller.signal.reason : err;
    } finally {
      cancelTimer?.();
      unlink();
    }
  }

  /**
   * Opens a streaming request (a watch): throttled, never retried, no deadline. Resolves with the
   * body stream once a 2xx answer arrives; rejects like {@link Transport.call} otherwise.
   */
  async open(request: HttpRequest): Promise<AsyncIterable<Uint8Array>> {
    await this.#limiter.wait(request.signal);
    const response = await this.#send(request, request.signal);
    if (response.statusCode >= 300) {
      throw apiErrorFromResponse(
        response.statusCode,
        flatHeaders(response.headers),
        await response.body.text(),
      );
    }
    return response.body;
  }

  /** One attempt; a 401 makes the next attempt resolve the credentials again (rotated tokens). */
  async #send(request: HttpRequest, signal: AbortSignal | undefined): Promise<Exchange> {
    const { send, basePath } = await this.#connection.target();
    const headers: Record<string, string> = {
      ...(await this.#connection.headers()),
      accept: 'application/json',
      'user-agent': this.#settings.userAgent,
    };
    if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
    const response = await send({
      method: request.method,
      path: `${basePath}${request.path}`,
      headers,
      body: request.body ?? null,
      signal: signal ?? null,
      ...(request.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: request.idleTimeoutMs }),
    });
    if (response.statusCode === 401) this.#connection.invalidateHeaders();
    return response;
  }
}

/** Response headers as single strings (repeated headers joined). */
function flatHeaders(headers: Exchange['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** Builds the {@link ApiError} of a non-2xx answer; the body is a `Status` when the server sent one. */
export function apiErrorFromResponse(
  statusCode: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): ApiError {
  const retryAfter = Number.parseInt(headers['retry-after'] ?? '', 10);
  const init: { status?: V1Status; reason?: string; retryAfterSeconds?: number } = {};
  if (Number.isFinite(retryAfter) && retryAfter >= 0) init.retryAfterSeconds = retryAfter;
  let message = body.trim() || `HTTP ${statusCode}`;
  const status = parseStatus(body);
  if (status !== undefined) {
    init.status = status;
    if (status.reason !== undefined) init.reason = status.reason;
    message = status.message ?? status.reason ?? message;
  }
  return new ApiError(statusCode, message, init);
}

function parseStatus(body: string): V1Status | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && (parsed as V1Status).kind === 'Status') {
      return parsed as V1Status;
    }
  } catch {
    // Not JSON: proxies and load balancers answer with text or HTML.
  }
  return undefined;
}

/** Makes `controller` abort when `signal` does; returns the function that undoes the link. */
function linkSignal(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (signal === undefined) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
