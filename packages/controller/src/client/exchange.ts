/**
 * One request and its response, as the transport sees it, whichever HTTP client carries it:
 * `node:http2` straight to the API server ({@link Http2Client}) or undici (plain HTTP, servers
 * without HTTP/2, proxies).
 */
import type { Dispatcher } from 'undici';

/** HTTP verbs the API client sends. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request ready to send: full path, final headers. */
export interface ExchangeRequest {
  readonly method: HttpMethod;
  /** Path and query, base path included. */
  readonly path: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
  readonly signal: AbortSignal | null;
  /** Fails the request when nothing arrives for this long; see `HttpRequest.idleTimeoutMs`. */
  readonly idleTimeoutMs?: number;
}

/** A response body, read once: whole as text, or as it arrives. */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  text(): Promise<string>;
}

/** A response whose headers have arrived. */
export interface Exchange {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: ResponseBody;
}

/** Sends one request. */
export type Send = (request: ExchangeRequest) => Promise<Exchange>;

/** Sends through an undici dispatcher to `origin`. */
export function undiciSend(dispatcher: Dispatcher, origin: string): Send {
  return (request) =>
    dispatcher.request({
      origin,
      path: request.path,
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      ...(request.idleTimeoutMs === undefined
        ? {}
        : { headersTimeout: request.idleTimeoutMs, bodyTimeout: request.idleTimeoutMs }),
    });
}

/** The code of {@link IdleTimeoutError}. */
const idleTimeoutCode = 'ERR_KUBE_IDLE_TIMEOUT';

/** A request that saw no headers, or then no body data, within its `idleTimeoutMs`. */
export class IdleTimeoutError extends Error {
  override readonly name = 'IdleTimeoutError';
  readonly code: string = idleTimeoutCode;
  constructor(idleTimeoutMs: number) {
    super(`nothing received for ${idleTimeoutMs} ms`);
  }
}

/** Whether `err` is a request's idle timeout, from either client. */
export function isIdleTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === idleTimeoutCode || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}
