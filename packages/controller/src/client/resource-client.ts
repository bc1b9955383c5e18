/**
 * The narrow API the controller machinery talks to: typed CRUD, list and watch on one resource.
 * {@link KubeApi} has two implementations: the real one over `@kubernetes/client-node`
 * (`client/kube-api.ts`) and the in-memory fake in `@kube-provisioner/controller/testing`.
 * Objects are `@kubernetes/client-node` model objects (Date-typed timestamps) on both.
 */
import type {
  CoreV1Event,
  V1Lease,
  V1Node,
  V1ObjectMeta,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Status,
  V1StorageClass,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** Identifies a resource on the API server. `T` is the object type it serves. */
export interface ResourceDescriptor<T extends KubeObject = KubeObject> {
  /** API group, `''` for core. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name in URLs, e.g. `persistentvolumes`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** `@kubernetes/client-node` ObjectSerializer type name, e.g. `V1PersistentVolume`. */
  readonly model: string;
  /** Phantom field carrying `T`; never set. */
  readonly __type?: T;
}

/** The resources the library uses. */
export const resources: {
  readonly persistentVolumes: ResourceDescriptor<V1PersistentVolume>;
  readonly persistentVolumeClaims: ResourceDescriptor<V1PersistentVolumeClaim>;
  readonly storageClasses: ResourceDescriptor<V1StorageClass>;
  readonly events: ResourceDescriptor<CoreV1Event>;
  readonly leases: ResourceDescriptor<V1Lease>;
  readonly nodes: ResourceDescriptor<V1Node>;
  readonly volumeAttributesClasses: ResourceDescriptor<V1VolumeAttributesClass>;
} = {
  persistentVolumes: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
    model: 'V1PersistentVolume',
  },
  persistentVolumeClaims: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    model: 'V1PersistentVolumeClaim',
  },
  storageClasses: {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'storageclasses',
    kind: 'StorageClass',
    namespaced: false,
    model: 'V1StorageClass',
  },
  events: {
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    model: 'CoreV1Event',
  },
  leases: {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
    model: 'V1Lease',
  },
  nodes: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, model: 'V1Node' },
  volumeAttributesClasses: {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'volumeattributesclasses',
    kind: 'VolumeAttributesClass',
    namespaced: false,
    model: 'V1VolumeAttributesClass',
  },
};

/** Options every call accepts. */
export interface CallOptions {
  /** Aborts the request. */
  signal?: AbortSignal;
  /**
   * Checked immediately before each attempt leaves (after the client throttle and any retry
   * backoff); throwing ends the call with that error and nothing is sent. The controller passes its
   * leader fence, so a write that waited for the throttle is not sent after the term ended.
   */
  beforeSend?: () => void;
}

/** Namespace of a namespaced resource; ignored for cluster-scoped ones. */
export interface NamespaceOption {
  namespace?: string;
}

/** Options of {@link ResourceClient.list}. */
export interface ListOptions<T extends KubeObject = KubeObject> extends CallOptions, NamespaceOption {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size. */
  limit?: number;
  /** Continue token of the previous page. */
  continue?: string;
  /** `'0'` = any (watch cache), `''`/absent = most recent (quorum read), else at least this version. */
  resourceVersion?: string;
  /**
   * Applied to each item as it is decoded, before the next one is read (client-go's informer
   * `TransformFunc`, moved to where the items arrive): the result's items are what it returns. A
   * LIST served from the watch cache is every object in one body, so dropping what a cache does not
   * need here, rather than after the whole list is decoded, keeps that garbage young and short-lived.
   */
  transform?: (item: T) => T;
  /**
   * Leave `metadata.managedFields` out of the items, before `transform` sees them. The client cuts
   * the member from each item's text unparsed: on objects written by server-side apply it is about
   * half the text and most of the values, so this spares most of a large LIST's parsing and garbage.
   */
  omitManagedFields?: boolean;
}

/** One page of a list. */
export interface ObjectList<T> {
  items: T[];
  metadata: { resourceVersion: string; continue?: string };
}

/** Options of {@link ResourceClient.watch}. */
export interface WatchOptions extends CallOptions, NamespaceOption {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side timeout after which the server closes the stream normally. */
  timeoutSeconds?: number;
  /**
   * Client-side silence bound: a stream that delivers nothing (no event, no bookmark) for this long
   * is taken for dead and ends normally, and the connection under it is checked and replaced when it
   * does not answer, so the next watch does not land on it again. Absent: only the client's general
   * inactivity guard applies.
   */
  idleTimeoutMs?: number;
}

/** Watch event types as sent by the API server. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One watch event. `ERROR` carries a `V1Status`; the others carry the object (BOOKMARK: only metadata.resourceVersion). */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: V1Status };

/** Patch content types. */
export type PatchType = 'merge' | 'strategic' | 'json';

/** Options of {@link ResourceClient.patch}. */
export interface PatchOptions extends CallOptions, NamespaceOption {
  /** Patch the object's `status` subresource (which needs its own RBAC verb) instead of the object. */
  subresource?: 'status';
}

/** Options of {@link ResourceClient.delete}. */
export interface DeleteOptions extends CallOptions, NamespaceOption {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

/** Typed operations on one resource. Failures reject with an {@link ApiError} (server answer) or a transport error. */
export interface ResourceClient<T extends KubeObject> {
  /** The resource this client operates on. */
  readonly descriptor: ResourceDescriptor<T>;
  /** Reads one object by name. */
  get(name: string, options?: CallOptions & NamespaceOption): Promise<T>;
  /** Lists one page of objects; pass `metadata.continue` back as `options.continue` for the next. */
  list(options?: ListOptions<T>): Promise<ObjectList<T>>;
  /**
   * Streams events to `onEvent`, in order and one at a time. Resolves when the stream ends: the
   * server closes it, the connection is lost mid-stream, it stays idle too long (`idleTimeoutMs`,
   * or the client's own guard), or `options.signal`
   * aborts; the caller then watches again from its last resourceVersion, as client-go's reflector
   * does. Rejects only when the watch cannot start (connection refused, an HTTP error status), when
   * an event cannot be decoded, or with the error `onEvent` throws. An expired resourceVersion usually
   * arrives as an `ERROR` event (410 Gone) on a started stream.
   */
  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void>;
  /** Creates `object` and resolves with the object as stored by the server. */
  create(object: T, options?: CallOptions & NamespaceOption): Promise<T>;
  /** PUT; the object's `metadata.resourceVersion` is the optimistic-concurrency precondition. */
  update(object: T, options?: CallOptions & NamespaceOption): Promise<T>;
  /** Applies `patch` to the named object with the given patch content type; resolves with the result. */
  patch(name: string, patch: unknown, type: PatchType, options?: PatchOptions): Promise<T>;
  /** Deletes the named object, subject to `options.preconditions` when given. */
  delete(name: string, options?: DeleteOptions): Promise<void>;
}

/** Access to typed resource clients. */
export interface KubeApi {
  /** Returns the typed client of the resource `descriptor` identifies. */
  resource<T extends KubeObject>(descriptor: ResourceDescriptor<T>): ResourceClient<T>;
}
