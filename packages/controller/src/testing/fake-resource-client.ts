/**
 * One resource's client of the fake API: each call is recorded and passes the reactor chain, then is
 * answered from the tracker as the API server would (paged lists with continue tokens, patches of the
 * three types, preconditions, 404 and 409 errors). Objects cross as deep copies in model form.
 */
import { decodeObject, encodeObject, type WireObject } from '../client/model-codec.ts';
import type {
  CallOptions,
  DeleteOptions,
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
import {
  modifiedMessage,
  notFound,
  type ObjectTracker,
  objectKey,
  qualifiedResource,
} from './object-tracker.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.ts';
import type { Action, Verb } from './reactor-chain.ts';
import { objectSelector } from './selectors.ts';
import { statusError } from './status-error.ts';

/** What the resource clients need from the fake, kept off its public surface. */
export interface Backend {
  readonly tracker: ObjectTracker;
  dispatch<R>(action: Action, call: CallOptions, fallback: () => R | Promise<R>): Promise<R>;
  stream<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void>;
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

/** The fake's client of one resource. */
export class FakeResourceClient<T extends KubeObject> implements ResourceClient<T> {
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
      const selects = objectSelector(this.descriptor, options);
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
