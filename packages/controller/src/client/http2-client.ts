/**
 * HTTP/2 on `node:http2` itself, for an API server reached directly over TLS (kube-apiserver always
 * offers h2, and client-go uses it). Measured against the same API server, 4 PV creates in flight,
 * CPU per request: `node:http2` 0.57 – 0.71 ms, client-go 0.55 – 0.68 ms, undici's HTTP/2 client
 * 0.69 – 0.93 ms; a provisioned claim costs three such requests. A server that does not negotiate
 * h2 in the TLS handshake gets the fallback client instead, for the life of this client.
 *
 * One session at a time carries new requests. It is replaced when it ends, when the server sends
 * GOAWAY, and when a stream on it stays silent for its idle timeout: the session is then PINGed, as
 * client-go's transport health check does, destroyed when the PING goes unanswered (its streams fail
 * and are retried or re-watched), and closed once its streams end when the PING is answered. A
 * session on which no frame passed for {@link Http2ClientOptions.readIdleTimeoutMs} is PINGed too,
 * like client-go's `ReadIdleTimeout`, and destroyed when that PING goes unanswered; answered, it
 * stays in use. That finds a connection that died silently (a node or NAT dropped it) even while
 * nothing waits on it.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { isIP } from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';
import {
  type Exchange,
  type ExchangeRequest,
  IdleTimeoutError,
  type ResponseBody,
  type Send,
} from './exchange.ts';

/** TCP keep-alive probe interval: client-go's. */
const keepAliveInitialDelayMs = 30_000;
/** How long a TLS connection may take: undici's connect timeout. */
const connectTimeoutMs = 10_000;
/** Options of {@link Http2Client}; the defaults are client-go's. */
export interface Http2ClientOptions {
  /** A session with no frame either way for this long is PINGed. Default 30 s (`ReadIdleTimeout`). */
  readonly readIdleTimeoutMs?: number;
  /** How long a PING may go unanswered before the session is taken for dead. Default 15 s (`PingTimeout`). */
  readonly pingTimeoutMs?: number;
}
/** How long {@link Http2Client.close} lets streams finish before it destroys their sessions. */
const closeGraceMs = 5_000;

/**
 * Flow-control windows. HTTP/2's default 64 KiB makes the server wait for a WINDOW_UPDATE every 64 KiB
 * of a LIST body. Read as they arrive, bodies never fill these; client-go's are larger still
 * (4 MiB per stream, 1 GiB per connection).
 */
const streamWindowBytes = 1 << 20;
const connectionWindowBytes = 4 << 20;

/** A stream or session that ended before the response did. */
export class StreamClosedError extends Error {
  override readonly name = 'StreamClosedError';
  /** Node's code for a stream destroyed before its end; the retry policy treats it as a broken connection. */
  readonly code: string = 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * The server refused a stream without processing it (RST_STREAM REFUSED_STREAM; HTTP/2, RFC 9113 section 8.7, https://www.rfc-editor.org/rfc/rfc9113#section-8.7):
 * safe to send again whatever the method, which the client does once, on a new session.
 */
export class RefusedStreamError extends Error {
  override readonly name = 'RefusedStreamError';
  /** Counted as a broken connection when the second attempt is refused too. */
  readonly code: string = 'ERR_HTTP2_STREAM_ERROR';
}

interface Connection {
  readonly session: ClientHttp2Session;
  /** The TLS socket under it: a session over a dead connection ends only when this is destroyed. */
  readonly socket: tls.TLSSocket;
  /** Streams open on it; the session keeps the process alive only while there are any. */
  active: number;
  /** A stream on it went silent: no new requests until a PING is answered. */
  suspect: boolean;
  /** Set while a PING awaits its answer: what runs when it comes. */
  onPingAnswer: (() => void)[] | undefined;
}

/** Sends requests over one HTTP/2 session to `url`'s server, or through `fallback` when it offers no h2. */
export class Http2Client {
  readonly #url: URL;
  readonly #tls: ConnectionOptions;
  readonly #fallback: Send;
  #useFallback = false;
  /** The session new requests go to. */
  #live: Connection | undefined;
  #connecting: Promise<Connection | undefined> | undefined;
  readonly #open = new Set<Connection>();
  readonly #readIdleTimeoutMs: number;
  readonly #pingTimeoutMs: number;

  /** `tlsOptions`: CA, client certificate and key, verification settings. */
  constructor(url: URL, tlsOptions: ConnectionOptions, fallback: Send, options: Http2ClientOptions = {}) {
    this.#url = url;
    this.#tls = tlsOptions;
    this.#fallback = fallback;
    this.#readIdleTimeoutMs = options.readIdleTimeoutMs ?? 30_000;
    this.#pingTimeoutMs = options.pingTimeoutMs ?? 15_000;
  }

  readonly send: Send = (request) => this.#send(request, true);

  async #send(request: ExchangeRequest, mayReconnect: boolean): Promise<Exchange> {
    if (this.#useFallback) return this.#fallback(request);
    const connection = this.#live ?? (await this.#connectOnce());
    if (connection === undefined) return this.#fallback(request);
    if (mayReconnect && (connection.session.closed || connection.session.destroyed)) {
      // Closing (GOAWAY) since it was picked: nothing was sent yet, so any request may go on a new one.
      this.#retire(connection);
      return this.#send(request, false);
    }
    request.signal?.throwIfAborted();
    try {
      return await this.#exchange(connection, request);
    } catch (err) {
      if (!mayReconnect || !neverSent(err)) throw err;
      this.#retire(connection);
      return this.#send(request, false);
    }
  }

  /**
   * Closes every session once its streams have ended, and destroys those still open after
   * {@link closeGraceMs}. Until then a timer holds the process open, so awaiting this can never be
   * the last thing a process waits for.
   */
  async close(): Promise<void> {
    this.#live = undefined;
    const open = [...this.#open].filter((connection) => !connection.session.destroyed);
    if (open.length === 0) return;
    const closed = open.map(
      (connection) =>
        new Promise<void>((resolve) => {
          const { session } = connection;
          session.once('close', () => resolve());
          if (connection.suspect) return kill(connection);
          // A session already closing (GOAWAY, or retired after a PING) ignores a second close.
          if (!session.closed) session.close();
        }),
    );
    const grace = setTimeout(() => {
      for (const connection of open) kill(connection);
    }, closeGraceMs);
    try {
      await Promise.all(closed);
    } finally {
      clearTimeout(grace);
    }
  }

  /** One connection attempt shared by every request that arrives while it is under way. */
  #connectOnce(): Promise<Connection | undefined> {
    if (this.#connecting === undefined) {
      const connecting = this.#connect().then((connection) => {
        if (connection === undefined) this.#useFallback = true;
        else this.#live = connection;
        return connection;
      });
      this.#connecting = connecting;
      const clear = (): void => {
        if (this.#connecting === connecting) this.#connecting = undefined;
      };
      connecting.then(clear, clear);
    }
    return this.#connecting;
  }

  /** Opens a TLS connection; an h2 session on it, or `undefined` when the server chose another protocol. */
  #connect(): Promise<Connection | undefined> {
    return new Promise((resolve, reject) => {
      const host = this.#url.hostname.replace(/^\[(.*)\]$/, '$1');
      const socket = tls.connect({
        host,
        port: Number(this.#url.port || 443),
        // SNI from the host name unless the kubeconfig names one, as https, undici and client-node do.
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...this.#tls,
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      socket.setKeepAlive(true, keepAliveInitialDelayMs);
      socket.setTimeout(connectTimeoutMs, () => {
        socket.destroy(
          Object.assign(new Error(`TLS connection to ${this.#url.host} timed out`), { code: 'ETIMEDOUT' }),
        );
      });
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        socket.setTimeout(0);
        socket.removeListener('error', reject);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          resolve(undefined);
          return;
        }
        const session = http2.connect(this.#url.origin, {
          createConnection: () => socket,
          settings: { initialWindowSize: streamWindowBytes },
        });
        session.setLocalWindowSize(connectionWindowBytes);
        const connection: Connection = {
          session,
          socket,
          active: 0,
          suspect: false,
          onPingAnswer: undefined,
        };
        this.#open.add(connection);
        session.unref();
        // Re-armed by every frame sent or received; its timer does not hold the process open.
        session.setTimeout(this.#readIdleTimeoutMs, () => this.#ping(connection, () => {}));
        // Without a listener an 'error' event would throw; the streams see the failure themselves.
        session.on('error', () => this.#retire(connection));
        session.on('goaway', () => this.#retire(connection));
        session.once('close', () => {
          this.#retire(connection);
          this.#open.delete(connection);
        });
        resolve(connection);
      });
    });
  }

  /** Takes `connection` out of use for new requests. */
  #retire(connection: Connection): void {
    if (this.#live === connection) this.#live = undefined;
  }

  /** A stream on `connection` went silent: new requests go elsewhere until a PING says it is alive. */
  #suspect(connection: Connection): void {
    if (connection.suspect) return;
    this.#retire(connection);
    // Already closing: it takes no new requests, and a PING there is refused.
    if (closing(connection)) return;
    connection.suspect = true;
    this.#ping(connection, () => {
      // Alive, but no longer current: it closes once its streams end.
      connection.suspect = false;
      connection.session.close();
    });
  }

  /**
   * PINGs `connection`'s session: `onAnswer` runs when the answer comes, and the session and its
   * socket are destroyed when none comes within the PING timeout. A session already closing is
   * left alone; a PING already awaiting its answer answers this one too.
   */
  #ping(connection: Connection, onAnswer: () => void): void {
    if (closing(connection)) return;
    if (connection.onPingAnswer !== undefined) {
      connection.onPingAnswer.push(onAnswer);
      return;
    }
    const waiting = [onAnswer];
    connection.onPingAnswer = waiting;
    const deadline = setTimeout(() => kill(connection), this.#pingTimeoutMs);
    deadline.unref();
    const sent = connection.session.ping((err) => {
      clearTimeout(deadline);
      connection.onPingAnswer = undefined;
      if (err) return kill(connection);
      for (const answered of waiting) answered();
    });
    if (!sent) {
      clearTimeout(deadline);
      kill(connection);
    }
  }

  #exchange(connection: Connection, request: ExchangeRequest): Promise<Exchange> {
    const { session } = connection;
    const stream = session.request(
      { ':method': request.method, ':path': request.path, ...request.headers },
      { endStream: request.body === null, ...(request.signal === null ? {} : { signal: request.signal }) },
    );
    connection.active += 1;
    if (connection.active === 1) session.ref();
    const state: StreamState = { failure: undefined, complete: false };
    stream.on('error', (err) => {
      state.failure ??= err;
    });
    // node:http2 also ends the readable side of the streams of a session it destroys; only an end
    // while the session lives is the server's END_STREAM.
    stream.once('end', () => {
      state.complete = !session.destroyed;
    });
    stream.once('close', () => {
      connection.active -= 1;
      if (connection.active === 0 && !session.destroyed) session.unref();
    });
    if (request.idleTimeoutMs !== undefined) {
      const idleMs = request.idleTimeoutMs;
      stream.setTimeout(idleMs, () => {
        this.#suspect(connection);
        stream.destroy(new IdleTimeoutError(idleMs));
      });
    }
    if (request.body !== null) stream.end(request.body);
    return new Promise((resolve, reject) => {
      // A call that reached its deadline without an answer may sit on a dead connection.
      const onAbort = (): void => {
        if ((request.signal?.reason as { name?: unknown } | undefined)?.name === 'TimeoutError') {
          this.#suspect(connection);
        }
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const onClose = (): void => {
        request.signal?.removeEventListener('abort', onAbort);
        reject(
          stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM
            ? new RefusedStreamError('the server refused the stream before processing it')
            : (state.failure ?? new StreamClosedError('the stream closed before its response')),
        );
      };
      stream.once('close', onClose);
      stream.once('response', (headers) => {
        stream.removeListener('close', onClose);
        request.signal?.removeEventListener('abort', onAbort);
        resolve({ statusCode: Number(headers[':status']), headers, body: responseBody(stream, state) });
      });
    });
  }
}

/** Whether `err` says the server never saw or never processed the request. */
function neverSent(err: unknown): boolean {
  if (err instanceof RefusedStreamError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  // Thrown by `session.request` on a session that closed since it was picked.
  return code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION';
}

/** What is known about a stream's end. */
interface StreamState {
  failure: unknown;
  /** The server ended it: the answer is whole. */
  complete: boolean;
}

/** Whether `connection`'s session is closing or gone: it takes no new streams, and refuses a PING. */
function closing(connection: Connection): boolean {
  return connection.session.closed || connection.session.destroyed;
}

/**
 * Ends a session over a connection taken for dead. `session.destroy()` alone first flushes its
 * writes, which never completes when nothing passes any more.
 */
function kill(connection: Connection): void {
  // With an error, so its streams fail rather than end as if complete.
  connection.session.destroy(new StreamClosedError('HTTP/2 connection unresponsive; closed'));
  connection.socket.destroy();
}

/** The body of `stream`. */
function responseBody(stream: ClientHttp2Stream, state: StreamState): ResponseBody {
  return {
    text: () =>
      new Promise((resolve, reject) => {
        let text = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => {
          text += chunk;
        });
        stream.once('end', () => (state.complete ? resolve(text) : reject(cutShort(state))));
        stream.once('close', () => {
          if (!stream.readableEnded) reject(cutShort(state));
        });
      }),
    [Symbol.asyncIterator]: () => chunks(stream, state),
  };
}

/** The chunks of `stream` as they arrive; throws when it ends before the server ended it. */
async function* chunks(stream: ClientHttp2Stream, state: StreamState): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } catch (err) {
    throw state.failure ?? err;
  }
  if (!state.complete) throw cutShort(state);
}

/** Why a stream's answer is incomplete. */
function cutShort(state: StreamState): unknown {
  return state.failure ?? new StreamClosedError('the stream ended before the server ended it');
}
