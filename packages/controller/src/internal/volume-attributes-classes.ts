/**
 * The VolumeAttributesClasses claims name, read from a cache (an informer) rather than with a GET per
 * claim. The informer starts on the first lookup, not with the controller: a provisioner whose claims
 * never name a class needs neither the RBAC to read classes nor an API server that serves them (the
 * v1 API exists since Kubernetes 1.34), and a drop-in deployment keeps working under its old RBAC.
 * The controller does not wait for this cache before it starts work; a lookup waits for it instead.
 */
import type { V1VolumeAttributesClass } from '@kubernetes/client-node';
import type { ResourceClient } from '../client/resource-client.ts';
import { SharedInformer } from '../informer/shared-informer.ts';
import { type Clock, sleep } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import { toError } from './to-error.ts';

/** The result of a lookup: the class, no such class, or no answer (the cache cannot sync). */
export type VolumeAttributesClassLookup =
  | { readonly kind: 'found'; readonly volumeAttributesClass: V1VolumeAttributesClass }
  | { readonly kind: 'missing'; readonly error: Error }
  | { readonly kind: 'unavailable'; readonly error: Error };

/** What {@link VolumeAttributesClassCache} needs. */
export interface VolumeAttributesClassCacheConfig {
  readonly client: ResourceClient<V1VolumeAttributesClass>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a lookup waits for the first LIST when that neither succeeds nor fails. */
  readonly syncTimeoutMs: number;
}

/** How often a lookup checks whether the cache has synced (client-go's `WaitForCacheSync` period). */
const syncPollMs = 100;

/** A lazily started cache of VolumeAttributesClasses; see the module comment. */
export class VolumeAttributesClassCache {
  readonly #config: VolumeAttributesClassCacheConfig;
  /** While {@link run} runs: when the informer must stop. */
  #signal: AbortSignal | undefined;
  #informer: SharedInformer<V1VolumeAttributesClass> | undefined;
  #running: Promise<void> = Promise.resolve();
  /** The error of the last failed list-and-watch cycle since the informer started, if any. */
  #lastError: Error | undefined;

  constructor(config: VolumeAttributesClassCacheConfig) {
    this.#config = config;
  }

  /**
   * Lets lookups start the informer until `signal` aborts; resolves once it has stopped (at once if
   * no lookup ever started it). Runs once.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#signal !== undefined) throw new Error('VolumeAttributesClassCache can run only once');
    this.#signal = signal;
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    await this.#running;
  }

  /**
   * The class named `name`. Starts the informer on first use and waits for its first LIST (at most
   * `syncTimeoutMs`, or until `signal` aborts); while the informer cannot list (RBAC, an API server
   * without the v1 API), answers `unavailable` with the last error at once.
   */
  async get(name: string, signal: AbortSignal): Promise<VolumeAttributesClassLookup> {
    const informer = this.#start();
    if (informer === undefined) {
      return { kind: 'unavailable', error: new Error('the controller is not running') };
    }
    if (!informer.hasSynced()) {
      const error = await this.#waitForSync(informer, signal);
      if (error !== undefined) return { kind: 'unavailable', error };
    }
    const found = informer.store.getByKey(name);
    if (found !== undefined) return { kind: 'found', volumeAttributesClass: found };
    // The API server's own words for a missing object, as external-provisioner's GET reports them.
    return {
      kind: 'missing',
      error: new Error(`volumeattributesclasses.storage.k8s.io "${name}" not found`),
    };
  }

  /** The informer, started now if need be; `undefined` outside {@link run}. */
  #start(): SharedInformer<V1VolumeAttributesClass> | undefined {
    const signal = this.#signal;
    if (signal === undefined || signal.aborted) return undefined;
    if (this.#informer !== undefined) return this.#informer;
    const { client, clock, logger } = this.#config;
    const informer = new SharedInformer(client, {
      clock,
      logger,
      onWatchError: (err) => {
        this.#lastError = toError(err);
        logger.warn({ err }, 'cannot list or watch VolumeAttributesClasses; retrying after backoff');
      },
    });
    this.#informer = informer;
    logger.info('Starting the VolumeAttributesClass informer: a claim names a VolumeAttributesClass');
    this.#running = informer.run(signal);
    return informer;
  }

  /** Waits for the first LIST; resolves to the reason it did not come, or `undefined` once it did. */
  async #waitForSync(
    informer: SharedInformer<V1VolumeAttributesClass>,
    signal: AbortSignal,
  ): Promise<Error | undefined> {
    const { clock, syncTimeoutMs } = this.#config;
    const deadline = clock.now() + syncTimeoutMs;
    while (!informer.hasSynced()) {
      if (this.#lastError !== undefined) return this.#lastError;
      if (clock.now() >= deadline) {
        return new Error(`the VolumeAttributesClass cache has not synced after ${syncTimeoutMs} ms`);
      }
      try {
        await sleep(clock, syncPollMs, signal);
      } catch (err) {
        return err === undefined ? new Error('the lookup was aborted') : toError(err);
      }
    }
    return undefined;
  }
}
