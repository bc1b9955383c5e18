/**
 * The storage of the fake API server: objects in wire form with the API server's bookkeeping —
 * one global, monotonically increasing resourceVersion (like etcd's revision), uid and
 * creationTimestamp on create, generateName, optimistic concurrency, delete preconditions,
 * finalizers (delete sets deletionTimestamp; removing the last finalizer deletes), and a bounded
 * event history that watches replay from.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { WireObject } from '../client/model-codec.ts';
import type { ResourceDescriptor } from '../client/resource-client.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { statusError } from './status-error.ts';

/** A change of one object, numbered by the resourceVersion it produced. */
export interface TrackerEvent {
  readonly resourceVersion: number;
  /** {@link resourceKey} of the object's resource. */
  readonly resource: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: WireObject;
  /** The state before a `MODIFIED` or `DELETED` change. */
  readonly previous?: WireObject;
}

/** Options of {@link ObjectTracker}. */
export interface ObjectTrackerOptions {
  /** Source of creation and deletion timestamps. */
  clock?: Clock;
  /** Events kept for watches to replay; older resourceVersions are `Expired`. Default 1000. */
  historyLimit?: number;
}

interface Metadata {
  name?: string | undefined;
  generateName?: string | undefined;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  creationTimestamp?: string | undefined;
  deletionTimestamp?: string | undefined;
  deletionGracePeriodSeconds?: number | undefined;
  finalizers?: string[] | undefined;
}

/** Identifies a resource across descriptors: `group/version/plural`. */
export function resourceKey(descriptor: ResourceDescriptor): string {
  return `${descriptor.group}/${descriptor.version}/${descriptor.plural}`;
}

/** `namespace/name`, or `name` when cluster-scoped: the order in which lists are returned. */
export function objectKey(object: WireObject): string {
  const { namespace, name } = metadataOf(object);
  return namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
}

function metadataOf(object: WireObject): Metadata {
  return (object.metadata ?? {}) as Metadata;
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

/** The resource as error messages name it: `plural` or `plural.group`. */
export function qualifiedResource(descriptor: ResourceDescriptor): string {
  return descriptor.group === '' ? descriptor.plural : `${descriptor.plural}.${descriptor.group}`;
}

function conflict(descriptor: ResourceDescriptor, name: string, why: string): Error {
  return statusError(
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(descriptor)} "${name}": ${why}`,
  );
}

/** The API server's message for a stale resourceVersion. */
export const modifiedMessage: string =
  'the object has been modified; please apply your changes to the latest version and try again';
/** The API server's 404 for a missing object. */
export function notFound(descriptor: ResourceDescriptor, name: string): Error {
  return statusError('NotFound', `${qualifiedResource(descriptor)} "${name}" not found`);
}

const nameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** Stores objects per resource; every method takes and returns copies. */
export class ObjectTracker {
  readonly #clock: Clock;
  readonly #historyLimit: number;
  readonly #objects = new Map<string, Map<string, WireObject>>();
  readonly #listeners = new Set<(event: TrackerEvent) => void>();
  #history: TrackerEvent[] = [];
  #revision = 0;
  #compacted = 0;

  constructor(options: ObjectTrackerOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#historyLimit = options.historyLimit ?? 1000;
  }

  /** The latest resourceVersion. */
  get revision(): number {
    return this.#revision;
  }

  /** The newest resourceVersion whose events are no longer kept; watches must start at or after it. */
  get compactedRevision(): number {
    return this.#compacted;
  }

  get(descriptor: ResourceDescriptor, namespace: string | undefined, name: string): WireObject | undefined {
    const stored = this.#bucket(descriptor).get(this.#key(descriptor, namespace, name));
    return stored === undefined ? undefined : copy(stored);
  }

  /** Objects of `descriptor` (in `namespace` when given), ordered by key. */
  list(descriptor: ResourceDescriptor, namespace?: string): WireObject[] {
    return [...this.#bucket(descriptor).values()]
      .filter((object) => !namespace || !descriptor.namespaced || metadataOf(object).namespace === namespace)
      .sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : 1))
      .map(copy);
  }

  /**
   * Stores a new object. With `seed`, uid, creationTimestamp, deletionTimestamp and a preset
   * resourceVersion are accepted as given (the resourceVersion is still replaced), to load fixtures.
   */
  create(descriptor: ResourceDescriptor, object: WireObject, namespace?: string, seed = false): WireObject {
    const stored = copy(object);
    const meta = this.#claimMetadata(descriptor, stored, namespace);
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    if (!meta.name) throw statusError('Invalid', `${descriptor.kind} "": metadata.name: Required value`);
    if (!seed && meta.resourceVersion) {
      throw statusError('BadRequest', 'resourceVersion should not be set on objects to be created');
    }
    const key = this.#key(descriptor, meta.namespace, meta.name);
    if (this.#bucket(descriptor).has(key)) {
      throw statusError('AlreadyExists', `${qualifiedResource(descriptor)} "${meta.name}" already exists`);
    }
    if (!seed || !meta.uid) meta.uid = randomUUID();
    if (!seed || !meta.creationTimestamp) meta.creationTimestamp = this.#timestamp();
    if (!seed) {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    return this.#commit(descriptor, key, 'ADDED', stored, undefined);
  }

  /**
   * Replaces a stored object. An empty resourceVersion is an unconditional update; a stale one is
   * `Conflict`. Identity fields and deletionTimestamp are kept from the stored object. An update
   * that changes nothing keeps the resourceVersion and emits no event, like the API server.
   */
  update(descriptor: ResourceDescriptor, object: WireObject, namespace?: string): WireObject {
    const next = copy(object);
    const meta = this.#claimMetadata(descriptor, next, namespace);
    const name = meta.name ?? '';
    const key = this.#key(descriptor, meta.namespace, name);
    const stored = this.#bucket(descriptor).get(key);
    if (stored === undefined) throw notFound(descriptor, name);
    const current = metadataOf(stored);
    if (meta.resourceVersion && meta.resourceVersion !== current.resourceVersion) {
      throw conflict(descriptor, name, modifiedMessage);
    }
    if (meta.uid && meta.uid !== current.uid) {
      throw conflict(
        descriptor,
        name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${current.uid}`,
      );
    }
    meta.uid = current.uid;
    meta.creationTimestamp = current.creationTimestamp;
    meta.resourceVersion = current.resourceVersion;
    // Only delete and finalizer removal move an object through deletion.
    for (const field of ['deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
      if (current[field] === undefined) delete meta[field];
      else Object.assign(meta, { [field]: current[field] });
    }
    if (meta.finalizers?.length === 0) delete meta.finalizers;
    if (isDeepStrictEqual(next, stored)) return copy(stored);
    if (meta.deletionTimestamp && !meta.finalizers?.length) {
      return this.#commit(descriptor, key, 'DELETED', next, stored);
    }
    return this.#commit(descriptor, key, 'MODIFIED', next, stored);
  }

  /**
   * Deletes an object, or only marks it with deletionTimestamp while it has finalizers. Returns the
   * object's last state.
   */
  delete(
    descriptor: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    preconditions: { uid?: string; resourceVersion?: string } = {},
  ): WireObject {
    const key = this.#key(descriptor, namespace, name);
    const stored = this.#bucket(descriptor).get(key);
    if (stored === undefined) throw notFound(descriptor, name);
    const current = metadataOf(stored);
    for (const field of ['uid', 'resourceVersion'] as const) {
      const expected = preconditions[field];
      if (expected !== undefined && expected !== current[field]) {
        const label = field === 'uid' ? 'UID' : 'ResourceVersion';
        throw conflict(
          descriptor,
          name,
          `Precondition failed: ${label} in precondition: ${expected}, ${label} in object meta: ${current[field] ?? ''}`,
        );
      }
    }
    if (!current.finalizers?.length) return this.#commit(descriptor, key, 'DELETED', copy(stored), stored);
    if (current.deletionTimestamp) return copy(stored);
    const marked = copy(stored);
    const meta = metadataOf(marked);
    meta.deletionTimestamp = this.#timestamp();
    meta.deletionGracePeriodSeconds = 0;
    return this.#commit(descriptor, key, 'MODIFIED', marked, stored);
  }

  /**
   * Events of `descriptor` after `resourceVersion`, oldest first. Fails with 410 `Expired` when
   * some of them are no longer kept.
   */
  eventsSince(descriptor: ResourceDescriptor, resourceVersion: number): TrackerEvent[] {
    if (resourceVersion < this.#compacted) {
      throw statusError('Expired', `too old resource version: ${resourceVersion} (${this.#compacted + 1})`);
    }
    const resource = resourceKey(descriptor);
    return this.#history
      .filter((e) => e.resource === resource && e.resourceVersion > resourceVersion)
      .map(copy);
  }

  /** Calls `listener` synchronously after every change; returns the unsubscribe function. */
  subscribe(listener: (event: TrackerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Drops the whole event history, so watches from any earlier resourceVersion are `Expired`. */
  compact(): void {
    this.#history = [];
    this.#compacted = this.#revision;
  }

  #commit(
    descriptor: ResourceDescriptor,
    key: string,
    type: TrackerEvent['type'],
    object: WireObject,
    previous: WireObject | undefined,
  ): WireObject {
    this.#revision++;
    const meta = metadataOf(object);
    meta.resourceVersion = String(this.#revision);
    if (type === 'DELETED') this.#bucket(descriptor).delete(key);
    else this.#bucket(descriptor).set(key, object);
    const event: TrackerEvent = {
      resourceVersion: this.#revision,
      resource: resourceKey(descriptor),
      type,
      object: copy(object),
      ...(previous === undefined ? {} : { previous: copy(previous) }),
    };
    this.#history.push(event);
    while (this.#history.length > this.#historyLimit) {
      this.#compacted = this.#history.shift()?.resourceVersion ?? this.#compacted;
    }
    for (const listener of this.#listeners) listener(event);
    return copy(object);
  }

  /** Reconciles the object's namespace with the request's and returns its (mutable) metadata. */
  #claimMetadata(
    descriptor: ResourceDescriptor,
    object: WireObject,
    namespace: string | undefined,
  ): Metadata {
    object.metadata ??= {};
    const meta = metadataOf(object);
    if (!descriptor.namespaced) {
      delete meta.namespace;
      return meta;
    }
    if (namespace && meta.namespace && namespace !== meta.namespace) {
      throw statusError(
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    meta.namespace = namespace || meta.namespace;
    if (!meta.namespace)
      throw statusError('BadRequest', `${descriptor.kind} is namespaced: a namespace is required`);
    return meta;
  }

  #key(descriptor: ResourceDescriptor, namespace: string | undefined, name: string): string {
    return descriptor.namespaced ? `${namespace ?? ''}/${name}` : name;
  }

  #bucket(descriptor: ResourceDescriptor): Map<string, WireObject> {
    const key = resourceKey(descriptor);
    let bucket = this.#objects.get(key);
    if (bucket === undefined) {
      bucket = new Map();
      this.#objects.set(key, bucket);
    }
    return bucket;
  }

  #timestamp(): string {
    return new Date(this.#clock.wallNow()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

function randomSuffix(): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += nameAlphabet[Math.floor(Math.random() * nameAlphabet.length)];
  return suffix;
}
