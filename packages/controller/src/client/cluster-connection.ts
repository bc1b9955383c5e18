/**
 * The connection settings of a kubeconfig's current context, resolved once: server origin and base
 * path, one HTTP client with the TLS material (an HTTP/2 session on `node:http2` when the server
 * is reached directly over TLS and offers h2, else a keep-alive undici pool), and the
 * authentication headers. client-node's `applySecurityAuthentication` re-reads the CA, certificate
 * and key files and builds a new agent on every request; here that happens once per client, and
 * only the headers are re-resolved: every {@link authRefreshMs}, and at once after a 401, so rotated
 * service-account tokens (FileAuth re-reads the file) and expiring exec/OIDC tokens are picked up,
 * as client-go's transport does with its token source.
 */
import type { RequestOptions } from 'node:https';
import type { ConnectionOptions } from 'node:tls';
import { HttpMethod, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';
import { type Send, undiciSend } from './exchange.ts';
import { Http2Client } from './http2-client.ts';

/** How long resolved authentication headers are reused before the kubeconfig is asked again. */
export const authRefreshMs = 60_000;

/** client-go's TCP keep-alive probe interval, which client-node also uses. */
const keepAliveInitialDelayMs = 30_000;

/** Where requests go: the HTTP client and the server URL's base path. */
export interface Target {
  readonly send: Send;
  /** Closes the client's connections once their requests have ended. */
  readonly close: () => Promise<void>;
  /** The server URL's path without trailing slash, e.g. `/k8s/clusters/c-1` behind a proxy; usually empty. */
  readonly basePath: string;
}

/** Connection settings of one kubeconfig context, shared by every transport of one client. */
export class ClusterConnection {
  readonly #kubeConfig: KubeConfig;
  readonly #now: () => number;
  #target: Promise<Target> | undefined;
  #headers: Promise<Readonly<Record<string, string>>> | undefined;
  #headersAt = 0;

  /** `now` is the millisecond clock of the header cache. */
  constructor(kubeConfig: KubeConfig, now: () => number) {
    this.#kubeConfig = kubeConfig;
    this.#now = now;
  }

  /** The pool, origin and base path of the current cluster; built on first use. */
  target(): Promise<Target> {
    if (this.#target === undefined) {
      const building = this.#buildTarget();
      building.catch(() => {
        if (this.#target === building) this.#target = undefined;
      });
      this.#target = building;
    }
    return this.#target;
  }

  async #buildTarget(): Promise<Target> {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server);
    return { ...(await this.#createClient(url)), basePath: url.pathname.replace(/\/+$/, '') };
  }

  /** Authentication (and impersonation) headers, cached for {@link authRefreshMs}. */
  headers(): Promise<Readonly<Record<string, string>>> {
    if (this.#headers === undefined || this.#now() - this.#headersAt >= authRefreshMs) {
      this.#headersAt = this.#now();
      const resolving = this.#resolveHeaders();
      // A failed resolution must not stick: the next request asks again.
      resolving.catch(() => {
        if (this.#headers === resolving) this.#headers = undefined;
      });
      this.#headers = resolving;
    }
    return this.#headers;
  }

  /** Forgets the cached headers, e.g. after a 401: the next request resolves them again. */
  invalidateHeaders(): void {
    this.#headers = undefined;
  }

  /** Closes the pooled connections; later requests open new ones. */
  async close(): Promise<void> {
    const target = this.#target;
    this.#target = undefined;
    const resolved = await target?.catch(() => undefined);
    await resolved?.close();
  }

  async #resolveHeaders(): Promise<Readonly<Record<string, string>>> {
    const options = await httpsOptions(this.#kubeConfig);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      // Lower case, as HTTP/2 requires.
      if (value !== undefined)
        headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    return headers;
  }

  /**
   * The HTTP client for `url` with the kubeconfig's TLS settings: HTTP/2 on `node:http2` for a
   * server reached directly over TLS, falling back to one keep-alive undici pool when it offers no
   * h2 (plain HTTP gets that pool at once). Proxies (HTTP and SOCKS) keep client-node's own
   * dispatcher, which knows how to tunnel; it is still built only once.
   */
  async #createClient(url: URL): Promise<Pick<Target, 'send' | 'close'>> {
    const options = await httpsOptions(this.#kubeConfig);
    const tls: Record<string, unknown> = {};
    for (const key of tlsKeys) if (options[key] !== undefined) tls[key] = options[key];
    const dispatcher = await this.#createDispatcher(tls);
    const pool = { send: undiciSend(dispatcher, url.origin), close: () => dispatcher.close() };
    if (url.protocol !== 'https:' || this.#kubeConfig.getCurrentCluster()?.proxyUrl) return pool;
    const http2 = new Http2Client(url, tls as ConnectionOptions, pool.send);
    return { send: http2.send, close: async () => void (await Promise.all([http2.close(), pool.close()])) };
  }

  /**
   * One keep-alive undici pool with the TLS settings `tls`, or client-node's own dispatcher for a
   * proxy.
   */
  async #createDispatcher(tls: Record<string, unknown>): Promise<Dispatcher> {
    const kubeConfig = this.#kubeConfig;
    const dispatcherOptions = kubeConfig.createDispatcherOptions(kubeConfig.getCurrentCluster(), tls);
    switch (dispatcherOptions.type) {
      case 'agent':
        // client-node's connect options are undici's, typed without exactOptionalPropertyTypes.
        return new Agent({ connect: dispatcherOptions.connect as NonNullable<Agent.Options['connect']> });
      case 'none':
        return new Agent({ connect: { keepAlive: true, keepAliveInitialDelay: keepAliveInitialDelayMs } });
      default: {
        const context = new RequestContext(kubeConfig.getCurrentCluster()?.server ?? '', HttpMethod.GET);
        await kubeConfig.applySecurityAuthentication(context);
        const dispatcher = context.getDispatcher();
        if (dispatcher === undefined) throw new Error('kubeconfig proxy settings produced no dispatcher');
        return dispatcher as Dispatcher;
      }
    }
  }
}

/** The TLS settings client-node's `applySecurityAuthentication` would use. */
const tlsKeys = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** client-node's HTTPS options of the current context: TLS material (files read now) and auth headers. */
async function httpsOptions(kubeConfig: KubeConfig): Promise<RequestOptions> {
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  // An https.Agent is made as a side effect; nothing uses it, and it holds no sockets.
  delete options.agent;
  return options;
}
