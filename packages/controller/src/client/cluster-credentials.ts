/**
 * Where a client's cluster and credentials come from: the server URL, the TLS material, the
 * authentication headers and (for plain HTTP, servers without HTTP/2 and proxies) an undici
 * dispatcher. Three sources implement it: a `@kubernetes/client-node` `KubeConfig` (every kubeconfig
 * form client-node supports), a kubeconfig file with static credentials (`kubeconfigFileCredentials`)
 * and the pod's service account ({@link inClusterCredentials}); the last two need neither client-node
 * nor undici at run time: importing client-node's configuration module loads every generated API.
 */
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher, Agent as UndiciAgent } from 'undici';

/** TLS settings of a connection, in `node:tls` terms. */
export interface TlsSettings {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly pfx?: string | Buffer;
  readonly passphrase?: string;
  readonly rejectUnauthorized?: boolean;
  readonly servername?: string;
}

/** The cluster and credentials of one client. Methods read files and run plugins when called. */
export interface ClusterCredentials {
  /** The API server URL, with any base path. */
  readonly server: string;
  /** Whether requests must go through a proxy (then only {@link ClusterCredentials.dispatcher} is used). */
  readonly proxied: boolean;
  /** The TLS material, read now. */
  tls(): Promise<TlsSettings>;
  /** Authentication (and impersonation) headers, resolved now; names in any case. */
  headers(): Promise<Readonly<Record<string, string>>>;
  /** A keep-alive undici dispatcher with `tls`, or the proxy's tunnelling one. */
  dispatcher(tls: TlsSettings): Promise<Dispatcher>;
}

/** client-go's TCP keep-alive probe interval, which client-node also uses. */
const keepAliveInitialDelayMs = 30_000;

/** A keep-alive undici pool with `tls`; undici is imported only when a pool is needed. */
export async function keepAlivePool(tls: TlsSettings | undefined): Promise<Dispatcher> {
  const { Agent } = await import('undici');
  return new Agent({ connect: { ...tls, keepAlive: true, keepAliveInitialDelay: keepAliveInitialDelayMs } });
}

/** The TLS settings client-node's `applySecurityAuthentication` would use. */
const tlsKeys = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** The credentials of `kubeConfig`'s current context. */
export function kubeConfigCredentials(kubeConfig: KubeConfig): ClusterCredentials {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  return {
    server: cluster.server,
    proxied: cluster.proxyUrl !== undefined && cluster.proxyUrl !== '',
    async tls() {
      const options = await httpsOptions(kubeConfig);
      const tls: Record<string, unknown> = {};
      for (const key of tlsKeys) if (options[key] !== undefined) tls[key] = options[key];
      return tls as TlsSettings;
    },
    async headers() {
      const options = await httpsOptions(kubeConfig);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
      }
      if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      return headers;
    },
    async dispatcher(tls) {
      const dispatcherOptions = kubeConfig.createDispatcherOptions(cluster, { ...tls });
      switch (dispatcherOptions.type) {
        case 'agent': {
          const { Agent } = await import('undici');
          // client-node's connect options are undici's, typed without exactOptionalPropertyTypes.
          return new Agent({
            connect: dispatcherOptions.connect as NonNullable<UndiciAgent.Options['connect']>,
          });
        }
        case 'none':
          return keepAlivePool(undefined);
        default: {
          // A proxy: client-node's dispatcher knows how to tunnel (HTTP and SOCKS).
          const { HttpMethod, RequestContext } = await import('@kubernetes/client-node');
          const context = new RequestContext(cluster.server, HttpMethod.GET);
          await kubeConfig.applySecurityAuthentication(context);
          const dispatcher = context.getDispatcher();
          if (dispatcher === undefined) throw new Error('kubeconfig proxy settings produced no dispatcher');
          return dispatcher as Dispatcher;
        }
      }
    },
  };
}

/** client-node's HTTPS options of the current context: TLS material (files read now) and auth headers. */
async function httpsOptions(kubeConfig: KubeConfig): Promise<RequestOptions> {
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  // An https.Agent is made as a side effect; nothing uses it, and it holds no sockets.
  delete options.agent;
  return options;
}
