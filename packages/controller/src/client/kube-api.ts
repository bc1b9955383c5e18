/**
 * The real {@link KubeApi}: typed CRUD, list and watch with the credentials of a kubeconfig or of
 * the pod's service account, decoded by the model codec, so list, get and watch all hand out
 * `@kubernetes/client-node`'s model shapes with `Date` timestamps.
 *
 * Watches are streamed here rather than through client-node's `Watch`: that class cuts every stream
 * after 30 s without traffic, swallows undecodable lines and callback throws, and reports HTTP errors
 * without their `Status`. Streaming on the same transport keeps one error model, the rate limiter and
 * the per-instance connection pool for watches too.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { type Clock, realClock } from '../util/clock.ts';
import { ClusterConnection } from './cluster-connection.ts';
import { type ClusterCredentials, kubeConfigCredentials } from './cluster-credentials.ts';
import { defaultCredentials } from './default-credentials.ts';
import { isIdleTimeout } from './exchange.ts';
import { inClusterCredentials } from './in-cluster-credentials.ts';
import { kubeconfigFileCredentials } from './kubeconfig-file.ts';
import { readLines } from './line-stream.ts';
import { readListBody } from './list-body.ts';
import { decodeObject, decodeStatus, withTypeMeta } from './model-codec.ts';
import { defaultRateLimit, type RateLimit, RequestLimiter } from './request-limiter.ts';
import type {
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
  WatchOptions,
} from './resource-client.ts';
import { defaultRetryPolicy, isTransientNetworkError, type RetryPolicy } from './retry.ts';
import { type HttpRequest, Transport, type TransportSettings } from './transport.ts';

/** Options of {@link createKubeApi}. */
export interface KubeApiOptions {
  /** Client-side throttle shared by every call of the instance. Default {@link defaultRateLimit} (50 QPS, burst 100). */
  rateLimit?: RateLimit;
  /** Deadline of one call, retries included; 0 = none. Not applied to watches. Default 30 s. */
  requestTimeoutMs?: number;
  /** Retries of throttled (429) and, for reads, network-failed requests. Default {@link defaultRetryPolicy}. */
  retry?: Partial<RetryPolicy>;
  /**
   * A watch that receives nothing for this long is closed as if the server had ended it, so a
   * half-open connection cannot stall it forever. This closes only the stream: on HTTP/2 (what
   * kube-apiserver negotiates) the connection under it stays pooled; a watch's own `idleTimeoutMs`
   * also has a dead connection replaced. Default: the watch's `timeoutSeconds` + 30 s, or 5 minutes.
   */
  watchInactivityTimeoutMs?: number;
  /** `User-Agent` header. Default `kube-provisioner`. */
  userAgent?: string;
  /** Time source of the limiter, retry backoff and timeouts. */
  clock?: Clock;
}

/** A {@link KubeApi} backed by a real API server. */
export interface KubeApiClient extends KubeApi {
  /**
   * A client on the same connections with its own limiter. The leader-election Lease client needs
   * one: when it shares the controllers' limiter, a burst of work can delay renewals until the lease
   * is lost (kueue#15538).
   */
  withRateLimit(rateLimit: RateLimit): KubeApiClient;
  /** Closes pooled connections of this client and of those made by {@link KubeApiClient.withRateLimit}. */
  close(): Promise<void>;
}

const defaultRequestTimeoutMs = 30_000;
const defaultWatchInactivityMs = 5 * 60_000;
const watchInactivityGraceMs = 30_000;

const contentTypes: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

interface ClientSettings extends TransportSettings {
  readonly watchInactivityTimeoutMs: number | undefined;
}

/**
 * Where a client's cluster and credentials come from:
 * - a `KubeConfig`: its current context (every form client-node supports: files, exec and auth
 *   plugins, proxies);
 * - `'default'`: what kubectl uses, read on first use: the files of `KUBECONFIG`, else
 *   `~/.kube/config`, else the pod's service account;
 * - `'in-cluster'`: the pod's service account (`KUBERNETES_SERVICE_HOST`/`_PORT`, the token re-read as
 *   it rotates, the cluster CA);
 * - `{ kubeconfig }`: the current context of that kubeconfig file (kubectl's `--kubeconfig`).
 *
 * Only a `KubeConfig`, and a kubeconfig whose user runs an `exec` or `auth-provider` plugin or whose
 * cluster has a `proxy-url`, load client-node at run time; the service account and a kubeconfig with
 * certificates or tokens do not, which saves about 60 MiB of a provisioner's idle memory.
 */
export type ClusterSource = KubeConfig | 'default' | 'in-cluster' | { readonly kubeconfig: string };

/**
 * Creates a {@link KubeApiClient} for `source` (default `'default'`). A source that cannot be read
 * (no kubeconfig, no service account) fails the client's requests with the reason, never this call.
 */
export function createKubeApi(
  source: ClusterSource = 'default',
  options: KubeApiOptions = {},
): KubeApiClient {
  const clock = options.clock ?? realClock;
  const settings: ClientSettings = {
    clock,
    retry: { ...defaultRetryPolicy, ...options.retry },
    requestTimeoutMs: options.requestTimeoutMs ?? defaultRequestTimeoutMs,
    userAgent: options.userAgent ?? 'kube-provisioner',
    watchInactivityTimeoutMs: options.watchInactivityTimeoutMs,
  };
  const connection = new ClusterConnection(
    () => credentialsOf(source),
    () => clock.now(),
  );
  return makeClient(settings, connection, options.rateLimit ?? defaultRateLimit);
}

async function credentialsOf(source: ClusterSource): Promise<ClusterCredentials> {
  if (source === 'default') return defaultCredentials();
  if (source === 'in-cluster') return inClusterCredentials();
  if ('kubeconfig' in source) return kubeconfigFileCredentials([source.kubeconfig]);
  return kubeConfigCredentials(source);
}

function makeClient(
  settings: ClientSettings,
  connection: ClusterConnection,
  rateLimit: RateLimit,
): KubeApiClient {
  const transport = new Transport(settings, connection, new RequestLimiter(rateLimit, settings.clock));
  return {
    resource: (descriptor) => new HttpResourceClient(descriptor, transport, settings),
    withRateLimit: (limit) => makeClient(settings, connection, limit),
    close: () => connection.close(),
  };
}

class HttpResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly descriptor: ResourceDescriptor<T>;
  readonly #transport: Transport;
  readonly #settings: ClientSettings;

  constructor(descriptor: ResourceDescriptor<T>, transport: Transport, settings: ClientSettings) {
    this.descriptor = descriptor;
    this.#transport = transport;
    this.#settings = settings;
  }

  async get(name: string, options: CallOptions & NamespaceOption = {}): Promise<T> {
    return this.#decode(await this.#call('GET', this.#itemPath(name, options.namespace), options));
  }

  async list(options: ListOptions<T> = {}): Promise<ObjectList<T>> {
    const query = queryString({
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      limit: options.limit,
      continue: options.continue,
      resourceVersion: options.resourceVersion,
    });
    const path = `${this.#collectionPath(options.namespace)}${query}`;
    // Item by item as the body arrives: a LIST from the watch cache is one body of every object.
    const { transform } = options;
    const decodeItem =
      transform === undefined
        ? (item: unknown) => this.#decode(item)
        : (item: unknown) => transform(this.#decode(item));
    const { body } = await this.#transport.call(this.#request('GET', path, options), (stream) =>
      readListBody(stream, decodeItem, { omitManagedFields: options.omitManagedFields ?? false }),
    );
    const listMeta = body.list.metadata as { resourceVersion?: string; continue?: string } | undefined;
    const metadata: ObjectList<T>['metadata'] = { resourceVersion: listMeta?.resourceVersion ?? '' };
    if (listMeta?.continue) metadata.continue = listMeta.continue;
    return { items: body.items, metadata };
  }

  async create(object: T, options: CallOptions & NamespaceOption = {}): Promise<T> {
    const namespace = options.namespace ?? object.metadata?.namespace;
    const path = this.#collectionPath(this.#requireNamespace(namespace));
    return this.#decode(await this.#call('POST', path, options, this.#encode(object)));
  }

  async update(object: T, options: CallOptions & NamespaceOption = {}): Promise<T> {
    const name = object.metadata?.name;
    if (!name) throw new TypeError(`update of a ${this.descriptor.kind} without metadata.name`);
    const path = this.#itemPath(name, options.namespace ?? object.metadata?.namespace);
    return this.#decode(await this.#call('PUT', path, options, this.#encode(object)));
  }

  async patch(name: string, patch: unknown, type: PatchType, options: PatchOptions = {}): Promise<T> {
    const item = this.#itemPath(name, options.namespace);
    const path = options.subresource === undefined ? item : `${item}/${options.subresource}`;
    const body = { text: JSON.stringify(patch), contentType: contentTypes[type] };
    return this.#decode(await this.#call('PATCH', path, options, body));
  }

  async delete(name: string, options: DeleteOptions = {}): Promise<void> {
    const { preconditions, gracePeriodSeconds, propagationPolicy } = options;
    const hasBody =
      preconditions !== undefined || gracePeriodSeconds !== undefined || propagationPolicy !== undefined;
    const body = hasBody
      ? {
          text: JSON.stringify({
            kind: 'DeleteOptions',
            apiVersion: 'v1',
            preconditions,
            gracePeriodSeconds,
            propagationPolicy,
          }),
          contentType: 'application/json',
        }
      : undefined;
    await this.#call('DELETE', this.#itemPath(name, options.namespace), options, body);
  }

  async watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    const query = queryString({
      watch: 'true',
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: options.timeoutSeconds,
    });
    const { clock } = this.#settings;
    const inactivityMs =
      this.#settings.watchInactivityTimeoutMs ??
      (options.timeoutSeconds !== undefined
        ? options.timeoutSeconds * 1000 + watchInactivityGraceMs
        : defaultWatchInactivityMs);
    // Aborted by the caller's signal and by the inactivity guard; either ends the watch normally.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    let cancelGuard = (): void => {};
    const armGuard = (): void => {
      cancelGuard();
      cancelGuard = clock.setTimer(() => {
        controller.abort(new DOMException(`watch idle for ${inactivityMs} ms`, 'TimeoutError'));
      }, inactivityMs);
    };
    let streaming = false;
    try {
      armGuard();
      const request: HttpRequest = {
        method: 'GET',
        path: `${this.#collectionPath(options.namespace)}${query}`,
        signal: controller.signal,
        ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
      };
      const stream = await this.#transport.open(request);
      streaming = true;
      for await (const line of readLines(stream, armGuard)) {
        const event = this.#decodeEvent(line);
        try {
          onEvent(event);
        } catch (err) {
          throw new HandlerError(err);
        }
      }
    } catch (err) {
      if (err instanceof HandlerError) throw err.cause;
      if (controller.signal.aborted) return;
      // Silent for idleTimeoutMs: the client checks the connection (see HttpRequest.idleTimeoutMs);
      // the caller watches again, on a new connection if this one was dead.
      if (isIdleTimeout(err)) return;
      // Like client-go's StreamWatcher: a connection lost mid-stream ends the watch; the caller
      // watches again from its last resourceVersion. Failing to connect is an error.
      if (streaming && isTransientNetworkError(err)) return;
      throw err;
    } finally {
      cancelGuard();
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  #decodeEvent(line: string): WatchEvent<T> {
    const raw = JSON.parse(line) as { type?: unknown; object?: unknown };
    switch (raw.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
      case 'BOOKMARK':
        return { type: raw.type, object: this.#decode(raw.object) };
      case 'ERROR':
        return { type: 'ERROR', object: decodeStatus(raw.object) };
      default:
        throw new Error(`watch of ${this.descriptor.plural}: unexpected event type ${String(raw.type)}`);
    }
  }

  async #call(
    method: HttpRequest['method'],
    path: string,
    options: CallOptions,
    body?: { text: string; contentType: string },
  ): Promise<unknown> {
    const result = await this.#transport.call(this.#request(method, path, options, body));
    return result.body === '' ? undefined : JSON.parse(result.body);
  }

  #request(
    method: HttpRequest['method'],
    path: string,
    options: CallOptions,
    body?: { text: string; contentType: string },
  ): HttpRequest {
    return {
      method,
      path,
      signal: options.signal,
      beforeSend: options.beforeSend,
      ...(body === undefined ? {} : { body: body.text, contentType: body.contentType }),
    };
  }

  /** `raw` is freshly parsed and nobody else's, so it is converted in place. */
  #decode(raw: unknown): T {
    return decodeObject(raw, this.descriptor);
  }

  #encode(object: T): { text: string; contentType: string } {
    return { text: JSON.stringify(withTypeMeta(object, this.descriptor)), contentType: 'application/json' };
  }

  #collectionPath(namespace: string | undefined): string {
    const { group, version, plural, namespaced } = this.descriptor;
    const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const scope = namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${base}${scope}/${plural}`;
  }

  #itemPath(name: string, namespace: string | undefined): string {
    if (!name) throw new TypeError(`${this.descriptor.kind} name must not be empty`);
    return `${this.#collectionPath(this.#requireNamespace(namespace))}/${encodeURIComponent(name)}`;
  }

  #requireNamespace(namespace: string | undefined): string | undefined {
    if (this.descriptor.namespaced && !namespace) {
      throw new TypeError(`${this.descriptor.kind} is namespaced: a namespace is required`);
    }
    return namespace;
  }
}

/** Marks an exception thrown by the caller's event handler, which must reach the caller unchanged. */
class HandlerError {
  readonly cause: unknown;
  constructor(cause: unknown) {
    this.cause = cause;
  }
}

function queryString(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
