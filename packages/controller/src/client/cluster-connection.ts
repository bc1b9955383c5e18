/**
 * The connection settings of one cluster, resolved once: server origin and base path, one HTTP
 * client with the TLS material (an HTTP/2 session on `node:http2` when the server is reached
 * directly over TLS and offers h2, else a keep-alive undici pool), and the authentication headers.
 * client-node's `applySecurityAuthentication` re-reads the CA, certificate and key files and builds a
 * new agent on every request; here that happens once per client, and only the headers are
 * re-resolved: every {@link authRefreshMs}, and at once after a 401, so rotated service-account
 * tokens and expiring exec/OIDC tokens are picked up, as client-go's transport does with its token
 * source.
 */
import type { ConnectionOptions } from 'node:tls';
import type { ClusterCredentials } from './cluster-credentials.ts';
import { type Send, undiciSend } from './exchange.ts';
import { Http2Client } from './http2-client.ts';

/** How long resolved authentication headers are reused before the kubeconfig is asked again. */
export const authRefreshMs = 60_000;

/** Where requests go: the HTTP client and the server URL's base path. */
export interface Target {
  readonly send: Send;
  /** Closes the client's connections once their requests have ended. */
  readonly close: () => Promise<void>;
  /** The server URL's path without trailing slash, e.g. `/k8s/clusters/c-1` behind a proxy; usually empty. */
  readonly basePath: string;
}

/** Connection settings of one cluster, shared by every transport of one client. */
export class ClusterConnection {
  readonly #credentials: () => Promise<ClusterCredentials>;
  readonly #now: () => number;
  #resolved: Promise<ClusterCredentials> | undefined;
  #target: Promise<Target> | undefined;
  #headers: Promise<Readonly<Record<string, string>>> | undefined;
  #headersAt = 0;

  /**
   * `credentials` is called once, on first use (again after it failed); `now` is the millisecond
   * clock of the header cache.
   */
  constructor(credentials: () => Promise<ClusterCredentials>, now: () => number) {
    this.#credentials = credentials;
    this.#now = now;
  }

  /** The pool, origin and base path of the cluster; built on first use. */
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

  #cluster(): Promise<ClusterCredentials> {
    if (this.#resolved === undefined) {
      const resolving = this.#credentials();
      resolving.catch(() => {
        if (this.#resolved === resolving) this.#resolved = undefined;
      });
      this.#resolved = resolving;
    }
    return this.#resolved;
  }

  async #buildTarget(): Promise<Target> {
    const credentials = await this.#cluster();
    const url = new URL(credentials.server);
    return { ...(await createClient(credentials, url)), basePath: url.pathname.replace(/\/+$/, '') };
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
    const resolved = await (await this.#cluster()).headers();
    const headers: Record<string, string> = {};
    // Lower case, as HTTP/2 requires.
    for (const [name, value] of Object.entries(resolved)) headers[name.toLowerCase()] = value;
    return headers;
  }
}

/**
 * The HTTP client for `url`: HTTP/2 on `node:http2` for a server reached directly over TLS, falling
 * back to one keep-alive undici pool when it offers no h2 (plain HTTP and proxies get that pool at
 * once). The pool, and undici with it, is made only when first needed.
 */
async function createClient(
  credentials: ClusterCredentials,
  url: URL,
): Promise<Pick<Target, 'send' | 'close'>> {
  const tls = await credentials.tls();
  let dispatcher: ReturnType<ClusterCredentials['dispatcher']> | undefined;
  const pool = () => {
    dispatcher ??= credentials.dispatcher(tls);
    return dispatcher;
  };
  const poolSend: Send = async (request) => undiciSend(await pool(), url.origin)(request);
  const closePool = async () => {
    const made = await dispatcher?.catch(() => undefined);
    await made?.close();
  };
  if (url.protocol !== 'https:' || credentials.proxied) return { send: poolSend, close: closePool };
  const http2 = new Http2Client(url, tls as ConnectionOptions, poolSend);
  return { send: http2.send, close: async () => void (await Promise.all([http2.close(), closePool()])) };
}
