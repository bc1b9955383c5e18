/**
 * The reflector keeps a store in step with the API server for one resource: LIST (paginated), then
 * WATCH from the list's resourceVersion with bookmarks, resuming the watch after normal closes and
 * relisting when it cannot continue. Behaviour follows client-go v0.34's reflector (its
 * `ListAndWatch`: when to relist, resume or back off).
 */
import { ApiError, isApiError, isGone, isTooManyRequests } from '../client/api-error.ts';
import type { KubeObject, ResourceClient, WatchEvent } from '../client/resource-client.ts';
import { networkErrorCode } from '../client/retry.ts';
import { Backoff } from '../util/backoff.ts';
import { type Clock, realClock, sleep } from '../util/clock.ts';
import { type Logger, silentLogger } from '../util/logger.ts';

/** Where the reflector writes what it sees. */
export interface ReflectorStore<T> {
  /** The full state after a LIST. */
  replace(items: readonly T[]): void;
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  /** Re-delivers the cached state (local only, no API call). */
  resync(): void;
}

/** What the reflector has done so far; relists = `lists` − 1. */
export interface ReflectorStats {
  /** Successful LISTs (each may span several pages). */
  readonly lists: number;
  /** WATCH requests started. */
  readonly watches: number;
  /** Watch events received, bookmarks included. */
  readonly events: number;
  /** Watches abandoned because they delivered nothing for `watchIdleTimeout` (then watched again). */
  readonly idleWatches: number;
}

/**
 * Options of the reflector, the list-and-watch loop that fills a {@link SharedInformer}'s cache.
 * Durations are milliseconds.
 */
export interface ReflectorOptions {
  /** Restricts a namespaced resource to one namespace. Default: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of LISTs. Default 500. */
  pageSize?: number;
  /** Server-side watch timeouts are drawn from [min, 2 × min). Default 5 minutes. */
  minWatchTimeout?: number;
  /**
   * A watch that delivers neither an event nor a bookmark for this long is taken for dead (a
   * half-open or black-holed connection looks exactly like a quiet one) and replaced by a new watch
   * from the last resourceVersion; the client also checks the connection under it (the watch
   * request's `idleTimeoutMs`). kube-apiserver sends every watcher a bookmark each minute,
   * so a live watch is never this quiet. Default 75 s; 0 turns the check off.
   */
  watchIdleTimeout?: number;
  /**
   * How often a resync (the store re-delivers its cached state, no API call) is considered while
   * watching; 0 (default) never.
   */
  resyncPeriod?: number;
  /** Asked at every resync tick; resync happens only when it answers true. Default: always. */
  shouldResync?: () => boolean;
  /**
   * Called with every error that ends a list-and-watch cycle (the reflector then backs off and
   * relists). Default: logs it, at `info` for an expired resourceVersion and `warn` otherwise.
   */
  onWatchError?: (err: unknown) => void;
  /** Delays between cycles and between retried watches. Default: 800 ms doubling to 30 s, jitter 1, reset after 2 min. */
  backoff?: Backoff;
  clock?: Clock;
  /** Uniform random source in [0, 1) for watch timeouts and the default backoff's jitter. */
  random?: () => number;
  logger?: Logger;
}

/** Thrown when a watch closes within a second without delivering anything: the server is likely unwell. */
export class VeryShortWatchError extends Error {
  override readonly name = 'VeryShortWatchError';
}

const defaultPageSize = 500;
const defaultMinWatchTimeout = 5 * 60_000;
const veryShortWatch = 1000;
/** kube-apiserver's bookmark period (60 s, measured) plus a margin for a busy server. */
const defaultWatchIdleTimeout = 75_000;

/** Mirrors one resource into a {@link ReflectorStore}. */
export class Reflector<T extends KubeObject> {
  readonly #client: ResourceClient<T>;
  readonly #store: ReflectorStore<T>;
  readonly #options: ReflectorOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger;
  readonly #backoff: Backoff;
  readonly #onWatchError: (err: unknown) => void;
  #lastSyncResourceVersion = '';
  /** Set after a LIST failed as expired or too large: the next LIST asks for the latest state. */
  #lastSyncResourceVersionUnavailable = false;
  /** The first `"0"` LIST came back paginated, so the server has no watch cache: keep paging. */
  #paginatedResult = false;
  #stats = { lists: 0, watches: 0, events: 0, idleWatches: 0 };

  constructor(client: ResourceClient<T>, store: ReflectorStore<T>, options: ReflectorOptions = {}) {
    this.#client = client;
    this.#store = store;
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#logger = (options.logger ?? silentLogger).child({ resource: client.descriptor.plural });
    this.#backoff =
      options.backoff ??
      new Backoff({
        initial: 800,
        factor: 2,
        jitter: 1,
        cap: 30_000,
        resetAfter: 2 * 60_000,
        clock: this.#clock,
        random: this.#random,
      });
    this.#onWatchError = options.onWatchError ?? ((err) => this.#logWatchError(err));
  }

  /** The resourceVersion of the last LIST or watch event applied to the store (`''` before the first LIST). */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
  }

  get stats(): ReflectorStats {
    return { ...this.#stats };
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#listAndWatch(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#reportError(err);
      }
      try {
        await sleep(this.#clock, this.#backoff.next(), signal);
      } catch {
        return;
      }
    }
  }

  async #listAndWatch(signal: AbortSignal): Promise<void> {
    await this.#list(signal);
    const stopResync = this.#startResync();
    try {
      await this.#watch(signal);
    } finally {
      stopResync();
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    let result: { items: T[]; resourceVersion: string };
    try {
      result = await this.#listPages(this.#relistResourceVersion(), signal);
    } catch (err) {
      if (!isGone(err) && !isTooLargeResourceVersion(err)) throw err;
      this.#lastSyncResourceVersionUnavailable = true;
      result = await this.#listPages(this.#relistResourceVersion(), signal);
    }
    this.#lastSyncResourceVersionUnavailable = false;
    this.#store.replace(result.items);
    this.#lastSyncResourceVersion = result.resourceVersion;
    this.#stats.lists += 1;
  }

  #relistResourceVersion(): string {
    if (this.#lastSyncResourceVersionUnavailable) return '';
    return this.#lastSyncResourceVersion === '' ? '0' : this.#lastSyncResourceVersion;
  }

  /**
   * Reads all pages of one LIST at `resourceVersion`. Follows client-go's pager: a continue token
   * that expires mid-way falls back to one unpaginated LIST at the requested version.
   */
  async #listPages(
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    // A LIST at a specific version is unpaginated so the watch cache can answer it, unless the
    // server showed it has no watch cache by paginating a "0" LIST.
    const specific = resourceVersion !== '' && resourceVersion !== '0';
    const limit =
      specific && !this.#paginatedResult ? undefined : (this.#options.pageSize ?? defaultPageSize);
    const { namespace, labelSelector, fieldSelector } = this.#options;
    const base = { signal, ...defined({ namespace, labelSelector, fieldSelector }) };
    const items: T[] = [];
    let page = await this.#client.list({ ...base, resourceVersion, ...defined({ limit }) });
    let paginated = false;
    for (;;) {
      for (const item of page.items) items.push(item);
      const token = page.metadata.continue;
      if (!token) break;
      paginated = true;
      try {
        // The resourceVersion must not be repeated with a continue token.
        page = await this.#client.list({ ...base, continue: token, ...defined({ limit }) });
      } catch (err) {
        if (!isGone(err)) throw err;
        const full = await this.#client.list({ ...base, resourceVersion });
        return { items: full.items, resourceVersion: full.metadata.resourceVersion };
      }
    }
    if (resourceVersion === '0' && paginated) this.#paginatedResult = true;
    return { items, resourceVersion: page.metadata.resourceVersion };
  }

  /** Watches from the last synced version until a watch ends in a way that needs a relist. */
  async #watch(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const ending = await this.#watchOnce(signal);
      if (signal.aborted) return;
      if (ending.kind === 'closed') continue;
      const err = ending.error;
      if (isTooManyRequests(err) || (ending.kind === 'failed' && networkErrorCode(err) === 'ECONNREFUSED')) {
        this.#logger.debug({ err }, 'watch could not proceed; backing off before watching again');
        try {
          await sleep(this.#clock, this.#backoff.next(), signal);
        } catch {
          return;
        }
        continue;
      }
      throw err;
    }
  }

  /** Runs one WATCH request and says how it ended. */
  async #watchOnce(
    signal: AbortSignal,
  ): Promise<{ kind: 'closed' } | { kind: 'error-event' | 'failed'; error: unknown }> {
    const stop = new AbortController();
    const watchSignal = AbortSignal.any([signal, stop.signal]);
    const started = this.#clock.now();
    let received = 0;
    let eventError: unknown;
    const { namespace, labelSelector, fieldSelector } = this.#options;
    const minTimeout = this.#options.minWatchTimeout ?? defaultMinWatchTimeout;
    const idleMs = this.#options.watchIdleTimeout ?? defaultWatchIdleTimeout;
    let lastActivity = started;
    this.#stats.watches += 1;
    try {
      await this.#client.watch(
        {
          ...defined({ namespace, labelSelector, fieldSelector }),
          resourceVersion: this.#lastSyncResourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.floor((minTimeout / 1000) * (this.#random() + 1)),
          ...(idleMs > 0 ? { idleTimeoutMs: idleMs } : {}),
          signal: watchSignal,
        },
        (event) => {
          if (watchSignal.aborted) return;
          lastActivity = this.#clock.now();
          received += 1;
          this.#stats.events += 1;
          if (event.type === 'ERROR') {
            eventError = ApiError.fromStatus(event.object);
            stop.abort();
            return;
          }
          this.#apply(event);
        },
      );
    } catch (err) {
      // The client ends a stream cut mid-way normally (as client-go's StreamWatcher does), so a
      // rejection means the watch could not start: never a normal close, whatever the error.
      if (eventError === undefined) return { kind: 'failed', error: err };
    }
    if (eventError !== undefined) return { kind: 'error-event', error: eventError };
    if (idleMs > 0 && !signal.aborted && this.#clock.now() - lastActivity >= idleMs) {
      this.#stats.idleWatches += 1;
      this.#logger.warn(
        { resourceVersion: this.#lastSyncResourceVersion, idleMs },
        'watch delivered neither events nor bookmarks; watching again from the last resourceVersion',
      );
      return { kind: 'closed' };
    }
    if (received === 0 && this.#clock.now() - started < veryShortWatch) {
      return {
        kind: 'error-event',
        error: new VeryShortWatchError('watch closed within a second without any event'),
      };
    }
    return { kind: 'closed' };
  }

  #apply(event: Exclude<WatchEvent<T>, { type: 'ERROR' }>): void {
    const resourceVersion = event.object.metadata?.resourceVersion;
    if (event.type !== 'BOOKMARK') {
      if (!event.object.metadata?.name) {
        this.#logger.warn({ type: event.type }, 'skipping watch event whose object has no name');
        return;
      }
      if (event.type === 'ADDED') this.#store.add(event.object);
      else if (event.type === 'MODIFIED') this.#store.update(event.object);
      else this.#store.delete(event.object);
    }
    if (resourceVersion) this.#lastSyncResourceVersion = resourceVersion;
  }

  #startResync(): () => void {
    const period = this.#options.resyncPeriod ?? 0;
    if (!(period > 0)) return () => {};
    const clock = this.#clock;
    const store = this.#store;
    const shouldResync = this.#options.shouldResync;
    let cancel = clock.setTimer(tick, period);
    function tick(): void {
      cancel = clock.setTimer(tick, period);
      if (shouldResync?.() ?? true) store.resync();
    }
    return () => cancel();
  }

  #reportError(err: unknown): void {
    try {
      this.#onWatchError(err);
    } catch (hookError) {
      this.#logger.error({ err: hookError }, 'watch error handler threw');
    }
  }

  #logWatchError(err: unknown): void {
    if (isGone(err)) this.#logger.info({ err }, 'resourceVersion expired; relisting');
    else this.#logger.warn({ err }, 'list and watch failed; relisting after backoff');
  }
}

/** The server's "Too large resource version" answer: it has not caught up with the version asked for. */
function isTooLargeResourceVersion(err: unknown): boolean {
  if (!isApiError(err)) return false;
  if (err.status?.details?.causes?.some((cause) => cause.reason === 'ResourceVersionTooLarge')) return true;
  return err.statusCode === 504 && err.message.includes('Too large resource version');
}

/** Drops `undefined` properties, which `exactOptionalPropertyTypes` forbids passing explicitly. */
function defined<O extends Record<string, unknown>>(
  object: O,
): { [K in keyof O]?: Exclude<O[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out as { [K in keyof O]?: Exclude<O[K], undefined> };
}
