/**
 * An in-memory {@link KubeApi} for unit tests of controllers and provisioners, in the spirit of
 * client-go's fake clientset: an {@link ObjectTracker} behind typed clients, a reactor chain to
 * inject failures or stub answers, and a record of every call.
 *
 * Objects cross the boundary as deep copies in model form (`Date` timestamps, exactly what the real
 * client returns), so a caller can never mutate stored state. Watch events are delivered
 * asynchronously, in order, one at a time.
 */
import type { V1Status } from '@kubernetes/client-node';
import { decodeObject, encodeObject } from '../client/model-codec.ts';
import type { KubeApi, KubeObject, ResourceClient, ResourceDescriptor } from '../client/resource-client.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { type Backend, FakeResourceClient } from './fake-resource-client.ts';
import { type ActiveWatch, streamWatch } from './fake-watch.ts';
import { ObjectTracker } from './object-tracker.ts';
import {
  type Action,
  type InjectedFailure,
  type Reactor,
  ReactorChain,
  type ReactorMatch,
} from './reactor-chain.ts';

/** Options of {@link FakeKubeApi}. */
export interface FakeKubeApiOptions {
  /** Source of timestamps and of watch `timeoutSeconds`. */
  clock?: Clock;
  /** Events kept for watches to replay. Default 1000. */
  historyLimit?: number;
}

/** The in-memory fake. */
export class FakeKubeApi implements KubeApi {
  readonly #tracker: ObjectTracker;
  readonly #clock: Clock;
  readonly #chain = new ReactorChain();
  readonly #watches = new Set<ActiveWatch>();
  readonly #backend: Backend;

  constructor(options: FakeKubeApiOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#tracker = new ObjectTracker({
      clock: this.#clock,
      ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
    });
    this.#backend = {
      tracker: this.#tracker,
      dispatch: (action, call, fallback) => this.#chain.dispatch(action, call, fallback),
      stream: (descriptor, options, onEvent) =>
        streamWatch(
          { tracker: this.#tracker, clock: this.#clock, watches: this.#watches },
          descriptor,
          options,
          onEvent,
        ),
    };
  }

  /** A client of one resource, as `KubeApi.resource`; its calls are recorded and pass the reactors. */
  resource<T extends KubeObject>(descriptor: ResourceDescriptor<T>): ResourceClient<T> {
    return new FakeResourceClient(descriptor, this.#backend);
  }

  /**
   * Stores fixtures without recording actions or running reactors. Given uid, timestamps and
   * finalizers are kept; resourceVersions are assigned. Watchers see `ADDED` events.
   */
  seed<T extends KubeObject>(descriptor: ResourceDescriptor<T>, ...objects: T[]): T[] {
    return objects.map((object) =>
      decodeObject(
        this.#tracker.create(descriptor, encodeObject(object, descriptor), undefined, true),
        descriptor,
      ),
    );
  }

  /** Stored objects of a resource (in `namespace` when given), ordered by key; not recorded. */
  objects<T extends KubeObject>(descriptor: ResourceDescriptor<T>, namespace?: string): T[] {
    return this.#tracker.list(descriptor, namespace).map((object) => decodeObject(object, descriptor));
  }

  /** Calls made so far, oldest first. */
  actions(): readonly Action[] {
    return this.#chain.actions();
  }

  /** Forgets the calls recorded so far. */
  clearActions(): void {
    this.#chain.clearActions();
  }

  /** Puts `react` first in the reactor chain for calls matching `match`; returns its removal. */
  prependReactor(match: ReactorMatch, react: Reactor): () => void {
    return this.#chain.prepend(match, react);
  }

  /** Makes the next `times` matching calls fail with `error`. */
  failNext(failure: InjectedFailure): void {
    let remaining = failure.times ?? 1;
    const remove = this.prependReactor(failure, () => {
      remaining--;
      if (remaining <= 0) remove();
      throw failure.error;
    });
  }

  /** The latest resourceVersion. */
  get resourceVersion(): string {
    return String(this.#tracker.revision);
  }

  /** Number of watches currently streaming. */
  activeWatches(): number {
    return this.#watches.size;
  }

  /**
   * Ends every active watch as the server would: after pending events, and after an `ERROR` event
   * carrying `status` when given (e.g. `failureStatus('Expired', …)`).
   */
  closeWatches(status?: V1Status): void {
    for (const watch of [...this.#watches]) watch.close(status);
  }

  /**
   * Makes every active watch go silent without ending, as a watch on a connection that died without
   * a reset: later events and bookmarks are lost. Such a watch ends only through its signal, its
   * `timeoutSeconds` or its `idleTimeoutMs`. Watches started afterwards are not affected.
   */
  silenceWatches(): void {
    for (const watch of this.#watches) watch.silence();
  }

  /** Sends a `BOOKMARK` at the latest resourceVersion to watches that allow bookmarks. */
  sendBookmarks(): void {
    for (const watch of this.#watches) if (watch.allowBookmarks) watch.bookmark(this.#tracker.revision);
  }

  /** Forgets the event history: watches and continue tokens from earlier resourceVersions get 410 `Expired`. */
  compact(): void {
    this.#tracker.compact();
  }
}
