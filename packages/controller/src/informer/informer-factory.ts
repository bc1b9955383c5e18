/**
 * Shares one informer, hence one LIST+WATCH, between every consumer of the same resource and
 * selectors, as client-go's `SharedInformerFactory`.
 */
import type { KubeApi, KubeObject, ResourceDescriptor } from '../client/resource-client.ts';
import { SharedInformer, type SharedInformerOptions } from './shared-informer.ts';
import { waitForCacheSync } from './wait-for-cache-sync.ts';

/** Which objects of a resource an informer caches. */
export interface InformerScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Settings every informer of a factory shares (each informer gets its own backoff). */
export type InformerFactoryOptions = Omit<
  SharedInformerOptions<KubeObject>,
  'indexers' | 'backoff' | keyof InformerScope
>;

/** Creates informers on demand and runs them together. */
export class SharedInformerFactory {
  readonly #api: KubeApi;
  readonly #options: InformerFactoryOptions;
  readonly #informers = new Map<string, SharedInformer<KubeObject>>();
  readonly #started = new Set<SharedInformer<KubeObject>>();

  constructor(api: KubeApi, options: InformerFactoryOptions = {}) {
    this.#api = api;
    this.#options = options;
  }

  /** The informer for `descriptor` within `scope`, created on first request and shared afterwards. */
  informerFor<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    scope: InformerScope = {},
  ): SharedInformer<T> {
    const key = JSON.stringify([
      descriptor.group,
      descriptor.version,
      descriptor.plural,
      scope.namespace ?? '',
      scope.labelSelector ?? '',
      scope.fieldSelector ?? '',
    ]);
    let informer = this.#informers.get(key) as SharedInformer<T> | undefined;
    if (informer === undefined) {
      informer = new SharedInformer(this.#api.resource(descriptor), { ...this.#options, ...scope });
      this.#informers.set(key, informer as unknown as SharedInformer<KubeObject>);
    }
    return informer;
  }

  /**
   * Runs every informer not started yet until `signal` aborts. Informers requested later need another
   * call. Resolves when the informers this call started have stopped.
   */
  async start(signal: AbortSignal): Promise<void> {
    const starting = [...this.#informers.values()].filter((informer) => !this.#started.has(informer));
    for (const informer of starting) this.#started.add(informer);
    await Promise.all(starting.map((informer) => informer.run(signal)));
  }

  /** Waits until every started informer has synced; `false` if `signal` aborts first. */
  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    const started = [...this.#started];
    return waitForCacheSync(
      { signal, ...(this.#options.clock === undefined ? {} : { clock: this.#options.clock }) },
      ...started.map((informer) => informer.hasSynced),
    );
  }
}
