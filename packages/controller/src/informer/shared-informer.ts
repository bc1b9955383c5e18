/**
 * A shared index informer: one reflector feeding one cache and any number of handlers, each with its
 * own buffered delivery and resync period, as client-go's `sharedIndexInformer`.
 */
import type { KubeObject, ResourceClient } from '../client/resource-client.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { type Logger, silentLogger } from '../util/logger.ts';
import type { EventHandler, HandlerRegistration } from './event-handler.ts';
import {
  effectiveResyncPeriod,
  minimumResyncPeriod,
  type Notification,
  ProcessorListener,
} from './processor-listener.ts';
import { type Delta, RealFifo } from './real-fifo.ts';
import { Reflector, type ReflectorOptions, type ReflectorStats } from './reflector.ts';
import { Indexer, type Indexers, type ReadonlyIndexer } from './store.ts';

/** Options of a {@link SharedInformer}. Durations are milliseconds. */
export interface SharedInformerOptions<T>
  extends Omit<ReflectorOptions, 'resyncPeriod' | 'shouldResync' | 'clock' | 'logger'> {
  /** Resync period of handlers registered without one, and how often resync is checked. 0 (default): none. */
  resyncPeriod?: number;
  /** Secondary indexes of the cache. More can be added until the informer starts. */
  indexers?: Indexers<T>;
  clock?: Clock;
  logger?: Logger;
}

/** Caches one resource and notifies registered handlers of changes. */
export class SharedInformer<T extends KubeObject> {
  readonly #client: ResourceClient<T>;
  readonly #options: SharedInformerOptions<T>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #indexer: Indexer<T>;
  readonly #fifo: RealFifo<T>;
  readonly #defaultResyncPeriod: number;
  #resyncCheckPeriod: number;
  readonly #listeners = new Set<ProcessorListener<T>>();
  /** Listeners whose resync is due in the current resync round. */
  #syncingListeners: ProcessorListener<T>[] = [];
  #reflector: Reflector<T> | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';

  constructor(client: ResourceClient<T>, options: SharedInformerOptions<T> = {}) {
    this.#client = client;
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? silentLogger).child({ resource: client.descriptor.plural });
    this.#indexer = new Indexer(options.indexers);
    this.#fifo = new RealFifo(this.#indexer);
    this.#defaultResyncPeriod = options.resyncPeriod ?? 0;
    this.#resyncCheckPeriod = this.#defaultResyncPeriod;
  }

  /** The cache. Objects are shared with handlers: never mutate them. */
  get store(): ReadonlyIndexer<T> {
    return this.#indexer;
  }

  /** Version of the last state applied to the cache; `''` before the first LIST. */
  get lastSyncResourceVersion(): string {
    return this.#reflector?.lastSyncResourceVersion ?? '';
  }

  /** Counters of the underlying reflector (all 0 before start). */
  get stats(): ReflectorStats {
    return this.#reflector?.stats ?? { lists: 0, watches: 0, events: 0, idleWatches: 0 };
  }

  /**
   * True once the first LIST has been applied to the cache and queued to handlers. Bound, so it can
   * be passed to `waitForCacheSync` as is.
   */
  readonly hasSynced: () => boolean = () => this.#fifo.hasSynced();

  /** Adds secondary indexes; only before {@link run}. */
  addIndexers(indexers: Indexers<T>): void {
    if (this.#state !== 'new') throw new Error('indexers cannot be added after the informer has started');
    this.#indexer.addIndexers(indexers);
  }

  /**
   * Registers `handler`. Registered while running, it first receives `onAdd(obj, true)` for every
   * cached object. `resyncPeriod` (default: the informer's) is raised to at least 1 s; below the
   * informer's resync check period it is raised to that period once running, and lowers the check
   * period before start.
   */
  addEventHandler(
    handler: EventHandler<T>,
    resyncPeriod: number = this.#defaultResyncPeriod,
  ): HandlerRegistration {
    if (this.#state === 'stopped') throw new Error('informer has stopped; handler not added');
    let requested = resyncPeriod;
    if (requested > 0) {
      requested = Math.max(requested, minimumResyncPeriod);
      if (requested < this.#resyncCheckPeriod) {
        if (this.#state === 'running') requested = this.#resyncCheckPeriod;
        else this.#lowerResyncCheckPeriod(requested);
      }
    }
    const listener = new ProcessorListener<T>({
      handler,
      requestedResyncPeriod: requested,
      resyncPeriod: effectiveResyncPeriod(requested, this.#resyncCheckPeriod),
      now: this.#clock.now(),
      upstreamHasSynced: this.hasSynced,
      onRemove: (removed) => {
        this.#listeners.delete(removed);
        this.#syncingListeners = this.#syncingListeners.filter((l) => l !== removed);
      },
      logger: this.#logger,
    });
    this.#listeners.add(listener);
    if (this.#state === 'running') {
      for (const obj of this.#indexer.list()) listener.add({ type: 'add', obj, isInInitialList: true });
    }
    return listener;
  }

  /** Lists, watches and delivers until `signal` aborts; resolves once stopped. Runs once per informer. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new Error('informer can run only once');
    this.#state = 'running';
    const { indexers: _indexers, resyncPeriod: _resyncPeriod, ...reflectorOptions } = this.#options;
    const reflector = new Reflector(this.#client, this.#fifo, {
      ...reflectorOptions,
      resyncPeriod: this.#resyncCheckPeriod,
      shouldResync: () => this.#shouldResync(),
    });
    this.#reflector = reflector;
    const close = (): void => this.#fifo.close();
    signal.addEventListener('abort', close, { once: true });
    if (signal.aborted) close();
    try {
      await Promise.all([reflector.run(signal), this.#processDeltas()]);
    } finally {
      signal.removeEventListener('abort', close);
      this.#state = 'stopped';
    }
  }

  async #processDeltas(): Promise<void> {
    const process = (delta: Delta<T>, isInInitialList: boolean): void => {
      try {
        this.#handleDelta(delta, isInInitialList);
      } catch (err) {
        // Only a custom index function can throw here; one bad object must not stop the informer.
        this.#logger.error({ err, key: delta.key }, 'failed to apply a change to the informer cache');
      }
    };
    while (await this.#fifo.drain(process)) {
      // Each round processes everything queued.
    }
  }

  #handleDelta(delta: Delta<T>, isInInitialList: boolean): void {
    if (delta.type === 'Deleted') {
      this.#indexer.delete(delta.object);
      this.#distribute({ type: 'delete', obj: delta.object }, false);
      return;
    }
    const obj = delta.object;
    const old = this.#indexer.getByKey(delta.key);
    if (old === undefined) {
      this.#indexer.add(obj);
      this.#distribute({ type: 'add', obj, isInInitialList }, false);
      return;
    }
    this.#indexer.update(obj);
    // An unchanged resourceVersion means a resync (or a relist that found no change): only
    // listeners whose resync is due get it.
    const isSync = old.metadata?.resourceVersion === obj.metadata?.resourceVersion;
    this.#distribute({ type: 'update', oldObj: old, newObj: obj }, isSync);
  }

  #distribute(notification: Notification<T>, isSync: boolean): void {
    for (const listener of isSync ? this.#syncingListeners : this.#listeners) listener.add(notification);
  }

  #shouldResync(): boolean {
    const now = this.#clock.now();
    this.#syncingListeners = [];
    for (const listener of this.#listeners) {
      if (!listener.resyncDue(now)) continue;
      this.#syncingListeners.push(listener);
      listener.scheduleNextResync(now);
    }
    return this.#syncingListeners.length > 0;
  }

  #lowerResyncCheckPeriod(period: number): void {
    this.#resyncCheckPeriod = period;
    for (const listener of this.#listeners) {
      listener.resyncPeriod = effectiveResyncPeriod(listener.requestedResyncPeriod, period);
    }
  }
}
