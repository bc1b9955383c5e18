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
import { decodeObject, decodeStatus, encodeObject, type WireObject } from '../client/model-codec.ts';
import type {
  CallOptions,
  DeleteOptions,
  KubeApi,
  KubeObject,
  ListOptions,
  NamespaceOption,
  ObjectList,
  PatchType,
  ResourceClient,
  ResourceDescriptor,
  WatchEvent,
  WatchOptions,
} from '../client/resource-client.ts';
import { trimManagedFields } from '../informer/without-managed-fields.ts';
import { type Clock, realClock } from '../util/clock.ts';
import {
  modifiedMessage,
  notFound,
  ObjectTracker,
  objectKey,
  qualifiedResource,
  resourceKey,
  type TrackerEvent,
} from './object-tracker.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.ts';
import { fieldSelector, labelSelector, type ObjectPredicate } from './selectors.ts';
import { failureStatus, statusError } from './status-error.ts';

/** API verbs, as client-go's fake names them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One recorded call. Objects and patches are copies taken when the call was made. */
export interface Action {
  readonly verb: Verb;
  /** Plural resource name, e.g. `persistentvolumes`. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The object sent by `create` and `update`. */
  readonly object?: KubeObject;
  readonly patch?: unknown;
  readonly patchType?: PatchType;
  /** Options of `list`, `watch` and `delete`, without the signal. */
  readonly options?: Readonly<Record<string, unknown>>;
}

/**
 * Sees each call before the fake does. Return nothing to pass the call on, `{ result }` to answer it
 * with `result` (a `T` for get/create/update/patch, an `ObjectList<T>` for list, ignored for delete
 * and watch, which then ends at once), or throw to fail it. May be async, e.g. to hold a call back.
 */
export type Reactor = (action: Action) => ReactorOutcome | Promise<ReactorOutcome>;

/** What a {@link Reactor} decided. */
export type ReactorOutcome = undefined | { readonly result: unknown };

/** Which calls a reactor sees; absent or `'*'` means all. */
export interface ReactorMatch {
  readonly verb?: Verb | '*';
  /** Plural resource name. */
  readonly resource?: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** A failure to inject with {@link FakeKubeApi.failNext}. */
export interface InjectedFailure extends ReactorMatch {
  /** Thrown by the matching calls, e.g. `statusError('Conflict', '…')`. */
  readonly error: unknown;
  /** How many matching calls fail. Default 1. */
  readonly times?: number;
}

/** Options of {@link FakeKubeApi}. */
export interface FakeKubeApiOptions {
  /** Source of timestamps and of watch `timeoutSeconds`. */
  clock?: Clock;
  /** Events kept for watches to replay. Default 1000. */
  historyLimit?: number;
}

/** What the resource clients need from the fake, kept off its public surface. */
interface Backend {
  readonly tracker: ObjectTracker;
  dispatch<R>(action: Action, call: CallOptions, fallback: () => R | Promise<R>): Promise<R>;
  stream<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void>;
}

interface ActiveWatch {
  readonly allowBookmarks: boolean;
  /** Drops every later event while the stream stays open. */
  silence(): void;
  bookmark(resourceVersion: number): void;
  close(status?: V1Status): void;
}

/** The in-memory fake. */
export class FakeKubeApi implements KubeApi {
  readonly #tracker: ObjectTracker;
  readonly #clock: Clock;
  readonly #reactors: { readonly match: ReactorMatch; readonly react: Reactor }[] = [];
  readonly #actions: Action[] = [];
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
      dispatch: (action, call, fallback) => this.#dispatch(action, call, fallback),
      stream: (descriptor, options, onEvent) => this.#stream(descriptor, options, onEvent),
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
    return [...this.#actions];
  }

  /** Forgets the calls recorded so far. */
  clearActions(): void {
    this.#actions.length = 0;
  }

  /** Puts `react` first in the reactor chain for calls matching `match`; returns its removal. */
  prependReactor(match: ReactorMatch, react: Reactor): () => void {
    const entry = { match, react };
    this.#reactors.unshift(entry);
    return () => {
      const index = this.#reactors.indexOf(entry);
      if (index >= 0) this.#reactors.splice(index, 1);
    };
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

  /** Runs `action` through the reactor chain, then `fallback`; `beforeSend` first, as the real client. */
  async #dispatch<R>(action: Action, call: CallOptions, fallback: () => R | Promise<R>): Promise<R> {
    const { signal } = call;
    signal?.throwIfAborted();
    call.beforeSend?.();
    this.#actions.push(action);
    for (const { match, react } of [...this.#reactors]) {
      if (!matches(match, action)) continue;
      const outcome = await abortable(
        Promise.resolve().then(() => react(action)),
        signal,
      );
      if (outcome !== undefined) return outcome.result as R;
    }
    signal?.throwIfAborted();
    return fallback();
  }

  /** Streams `descriptor` changes to `onEvent` per the watch options. */
  #stream<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void> {
    const selects = selector(descriptor, options);
    const resource = resourceKey(descriptor);
    const queue: WatchEvent<T>[] = [];
    let scheduled = false;
    let closing = false;
    let finished = false;
    let silent = false;
    let cancelIdle = (): void => {};
    return new Promise<void>((resolve, reject) => {
      const finish = (error?: unknown): void => {
        if (finished) return;
        finished = true;
        unsubscribe();
        cancelTimeout();
        cancelIdle();
        options.signal?.removeEventListener('abort', onAbort);
        this.#watches.delete(watch);
        if (error === undefined) resolve();
        else reject(error);
      };
      const drain = (): void => {
        scheduled = false;
        while (!finished && queue.length > 0) {
          const event = queue.shift() as WatchEvent<T>;
          try {
            onEvent(event);
          } catch (err) {
            finish(err);
            return;
          }
        }
        if (closing) finish();
      };
      const push = (event: WatchEvent<T>): void => {
        if (finished || closing || silent) return;
        armIdle();
        queue.push(event);
        if (!scheduled) {
          scheduled = true;
          queueMicrotask(drain);
        }
      };
      const close = (status?: V1Status): void => {
        if (status !== undefined) push({ type: 'ERROR', object: decodeStatus(structuredClone(status)) });
        closing = true;
        if (!scheduled) {
          scheduled = true;
          queueMicrotask(drain);
        }
      };
      // Like the real client: a stream silent for idleTimeoutMs ends normally.
      const armIdle = (): void => {
        cancelIdle();
        const idleMs = options.idleTimeoutMs;
        if (idleMs !== undefined && idleMs > 0) cancelIdle = this.#clock.setTimer(() => close(), idleMs);
      };
      const deliver = (event: TrackerEvent): void => {
        if (event.resource !== resource) return;
        const now = selects(event.object);
        const before = event.previous !== undefined && event.type !== 'ADDED' && selects(event.previous);
        let type: 'ADDED' | 'MODIFIED' | 'DELETED';
        if (event.type === 'DELETED') {
          if (!before) return;
          type = 'DELETED';
        } else if (now) {
          type = before ? 'MODIFIED' : 'ADDED';
        } else if (before) {
          type = 'DELETED';
        } else {
          return;
        }
        push({ type, object: decodeObject(structuredClone(event.object), descriptor) });
      };
      const watch: ActiveWatch = {
        allowBookmarks: options.allowWatchBookmarks === true,
        silence: () => {
          silent = true;
        },
        bookmark: (resourceVersion) =>
          push({
            type: 'BOOKMARK',
            object: decodeObject(
              { kind: descriptor.kind, metadata: { resourceVersion: String(resourceVersion) } },
              descriptor,
            ),
          }),
        // A server-side close never reaches a client whose connection is dead.
        close: (status) => {
          if (!silent) close(status);
        },
      };
      const onAbort = (): void => finish();
      const unsubscribe = this.#tracker.subscribe(deliver);
      const cancelTimeout =
        options.timeoutSeconds !== undefined
          ? this.#clock.setTimer(() => close(), options.timeoutSeconds * 1000)
          : () => {};
      if (options.signal?.aborted) {
        finish();
        return;
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#watches.add(watch);
      armIdle();
      // Subscribing and replaying in one synchronous step leaves no gap between them.
      const from = options.resourceVersion;
      if (!from || from === '0') {
        for (const object of this.#tracker.list(descriptor, options.namespace)) {
          if (selects(object)) push({ type: 'ADDED', object: decodeObject(object, descriptor) });
        }
        return;
      }
      try {
        for (const event of this.#tracker.eventsSince(descriptor, Number(from))) deliver(event);
      } catch (err) {
        close((err as { status?: V1Status }).status ?? failureStatus('InternalError', String(err)));
      }
    });
  }
}

function matches(match: ReactorMatch, action: Action): boolean {
  return (
    (match.verb === undefined || match.verb === '*' || match.verb === action.verb) &&
    (match.resource === undefined || match.resource === '*' || match.resource === action.resource) &&
    (match.name === undefined || match.name === action.name) &&
    (match.namespace === undefined || match.namespace === action.namespace)
  );
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function selector(
  descriptor: ResourceDescriptor,
  options: { namespace?: string; labelSelector?: string; fieldSelector?: string },
): ObjectPredicate {
  const labels = labelSelector(options.labelSelector);
  const fields = fieldSelector(options.fieldSelector);
  const namespace = descriptor.namespaced ? options.namespace : undefined;
  return (object) =>
    (!namespace || (object.metadata as { namespace?: string } | undefined)?.namespace === namespace) &&
    labels(object) &&
    fields(object);
}

function optionsRecord(options: object): Record<string, unknown> {
  const {
    signal: _signal,
    beforeSend: _beforeSend,
    transform: _transform,
    omitManagedFields: _omitManagedFields,
    ...rest
  } = options as {
    signal?: unknown;
    beforeSend?: unknown;
    transform?: unknown;
    omitManagedFields?: unknown;
  };
  return structuredClone(rest);
}

function namespaceOf(descriptor: ResourceDescriptor, namespace: string | undefined): string | undefined {
  return descriptor.namespaced ? namespace : undefined;
}

interface ContinueToken {
  readonly rv: number;
  readonly key: string;
}

class FakeResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly descriptor: ResourceDescriptor<T>;
  readonly #api: Backend;

  constructor(descriptor: ResourceDescriptor<T>, api: Backend) {
    this.descriptor = descriptor;
    this.#api = api;
  }

  get(name: string, options: CallOptions & NamespaceOption = {}): Promise<T> {
    const namespace = namespaceOf(this.descriptor, options.namespace);
    return this.#api.dispatch(this.#action('get', { name, namespace }), options, () => {
      const stored = this.#api.tracker.get(this.descriptor, namespace, name);
      if (stored === undefined) throw notFound(this.descriptor, name);
      return this.#decode(stored);
    });
  }

  async list(options: ListOptions<T> = {}): Promise<ObjectList<T>> {
    const namespace = namespaceOf(this.descriptor, options.namespace);
    const action = this.#action('list', { namespace, options: optionsRecord(options) });
    const list = await this.#api.dispatch(action, options, (): ObjectList<T> => {
      const tracker = this.#api.tracker;
      const selects = selector(this.descriptor, options);
      const all = tracker.list(this.descriptor, namespace).filter(selects);
      let listRevision = tracker.revision;
      let start = 0;
      if (options.continue) {
        const token = decodeContinue(options.continue);
        if (token.rv < tracker.compactedRevision) {
          throw statusError(
            'Expired',
            'The provided continue parameter is too old to display a consistent list result.',
          );
        }
        listRevision = token.rv;
        start = all.findIndex((object) => objectKey(object) > token.key);
        if (start < 0) start = all.length;
      }
      const end = options.limit && options.limit > 0 ? start + options.limit : all.length;
      const page = all.slice(start, end);
      const metadata: ObjectList<T>['metadata'] = { resourceVersion: String(listRevision) };
      const last = page.at(-1);
      if (end < all.length && last !== undefined) {
        metadata.continue = encodeContinue({ rv: listRevision, key: objectKey(last) });
      }
      return { items: page.map((object) => this.#decode(object)), metadata };
    });
    // After the reactors too: the real client decodes whatever the server answered.
    const { transform, omitManagedFields } = options;
    const items = omitManagedFields ? list.items.map(trimManagedFields) : list.items;
    return { ...list, items: transform === undefined ? items : items.map(transform) };
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    const namespace = namespaceOf(this.descriptor, options.namespace);
    const action = this.#action('watch', { namespace, options: optionsRecord(options) });
    return this.#api
      .dispatch(action, options, () => this.#api.stream(this.descriptor, options, onEvent))
      .catch((err: unknown) => {
        if (options.signal?.aborted) return;
        throw err;
      });
  }

  create(object: T, options: CallOptions & NamespaceOption = {}): Promise<T> {
    const namespace = namespaceOf(this.descriptor, options.namespace ?? object.metadata?.namespace);
    const wire = encodeObject(object, this.descriptor);
    const action = this.#action('create', {
      namespace,
      name: object.metadata?.name,
      object: this.#decode(structuredClone(wire)),
    });
    return this.#api.dispatch(action, options, () =>
      this.#decode(this.#api.tracker.create(this.descriptor, wire, namespace)),
    );
  }

  update(object: T, options: CallOptions & NamespaceOption = {}): Promise<T> {
    const namespace = namespaceOf(this.descriptor, options.namespace ?? object.metadata?.namespace);
    const wire = encodeObject(object, this.descriptor);
    const action = this.#action('update', {
      namespace,
      name: object.metadata?.name,
      object: this.#decode(structuredClone(wire)),
    });
    return this.#api.dispatch(action, options, () =>
      this.#decode(this.#api.tracker.update(this.descriptor, wire, namespace)),
    );
  }

  patch(
    name: string,
    patch: unknown,
    type: PatchType,
    options: CallOptions & NamespaceOption = {},
  ): Promise<T> {
    const namespace = namespaceOf(this.descriptor, options.namespace);
    // Through JSON, as on the wire: Dates become strings.
    const body: unknown = JSON.parse(JSON.stringify(patch));
    const action = this.#action('patch', { namespace, name, patch: body, patchType: type });
    return this.#api.dispatch(action, options, () => {
      const tracker = this.#api.tracker;
      const stored = tracker.get(this.descriptor, namespace, name);
      if (stored === undefined) throw notFound(this.descriptor, name);
      const apply = { merge: applyMergePatch, strategic: applyStrategicMergePatch, json: applyJsonPatch }[
        type
      ];
      const patched = apply(stored, body) as WireObject;
      const storedVersion = (stored.metadata as { resourceVersion?: string }).resourceVersion;
      const meta = (patched.metadata ?? {}) as { resourceVersion?: string };
      // A resourceVersion in the patch is a precondition; otherwise a patch applies unconditionally.
      if (meta.resourceVersion !== undefined && meta.resourceVersion !== storedVersion) {
        throw statusError(
          'Conflict',
          `Operation cannot be fulfilled on ${qualifiedResource(this.descriptor)} "${name}": ${modifiedMessage}`,
        );
      }
      patched.metadata = { ...meta, resourceVersion: storedVersion };
      return this.#decode(tracker.update(this.descriptor, patched, namespace));
    });
  }

  delete(name: string, options: DeleteOptions = {}): Promise<void> {
    const namespace = namespaceOf(this.descriptor, options.namespace);
    const action = this.#action('delete', { namespace, name, options: optionsRecord(options) });
    return this.#api.dispatch(action, options, () => {
      this.#api.tracker.delete(this.descriptor, namespace, name, options.preconditions);
    });
  }

  #action(
    verb: Verb,
    fields: { [K in keyof Omit<Action, 'verb' | 'resource'>]?: Action[K] | undefined },
  ): Action {
    const action: Record<string, unknown> = { verb, resource: this.descriptor.plural };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) action[key] = value;
    return action as unknown as Action;
  }

  #decode(wire: WireObject): T {
    return decodeObject(wire, this.descriptor);
  }
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof token.rv === 'number' && typeof token.key === 'string') return token;
  } catch {
    // Reported below.
  }
  throw statusError('BadRequest', 'continue key is not valid');
}
