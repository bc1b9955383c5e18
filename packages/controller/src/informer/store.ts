/**
 * The informer cache: objects by key plus named secondary indexes, like client-go's thread-safe
 * indexer. Objects are stored by reference, never copied, so callers MUST treat them as read-only.
 */
import type { KubeObject } from '../client/resource-client.ts';
import { deletionHandlingMetaNamespaceKey, type KeyFunc } from './keys.ts';
import type { DeletedFinalStateUnknown } from './tombstone.ts';

/** Maps an object to the index values it is found under (none, one or several). */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Named index functions. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/** Name of the index {@link indexByNamespace} is registered under by convention. */
export const namespaceIndex = 'namespace';

/** Name of the index {@link indexByUid} is registered under; the provisioner looks claims up by UID. */
export const uidIndex = 'uid';

/** Indexes an object by `metadata.namespace` (cluster-scoped objects are not indexed). */
export function indexByNamespace(obj: KubeObject): readonly string[] {
  const namespace = obj.metadata?.namespace;
  return namespace ? [namespace] : [];
}

/** Indexes an object by `metadata.uid`. */
export function indexByUid(obj: KubeObject): readonly string[] {
  const uid = obj.metadata?.uid;
  return uid ? [uid] : [];
}

/** Read access to an informer cache. */
export interface ReadonlyIndexer<T> {
  /** Number of cached objects. */
  readonly size: number;
  /** The object cached under `key`, or `undefined` when there is none. */
  getByKey(key: string): T | undefined;
  /** Every cached object, in no particular order. */
  list(): T[];
  /** The key of every cached object, in no particular order. */
  listKeys(): string[];
  /** Objects whose index `indexName` contains `value`. Throws for an unknown index name. */
  byIndex(indexName: string, value: string): T[];
  /** Keys of the objects whose index `indexName` contains `value`. Throws for an unknown index name. */
  indexKeys(indexName: string, value: string): string[];
}

/** A keyed object cache with named secondary indexes. */
export class Indexer<T extends KubeObject> implements ReadonlyIndexer<T> {
  readonly #keyOf: KeyFunc<T | DeletedFinalStateUnknown<T>>;
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  /** index name → index value → keys. */
  readonly #indices = new Map<string, Map<string, IndexEntry>>();

  constructor(
    indexers: Indexers<T> = {},
    keyOf: KeyFunc<T | DeletedFinalStateUnknown<T>> = deletionHandlingMetaNamespaceKey,
  ) {
    this.#keyOf = keyOf;
    this.addIndexers(indexers);
  }

  get size(): number {
    return this.#items.size;
  }

  /** Adds indexes; objects already cached are indexed at once. Throws if a name is already taken. */
  addIndexers(indexers: Indexers<T>): void {
    for (const name of Object.keys(indexers)) {
      if (this.#indexers.has(name)) throw new Error(`indexer "${name}" already exists`);
    }
    for (const [name, fn] of Object.entries(indexers)) {
      this.#indexers.set(name, fn);
      const index = new Map<string, IndexEntry>();
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) addToIndex(index, fn(obj), key);
    }
  }

  /** Inserts or replaces the object under its key. */
  add(obj: T): void {
    const key = this.#keyOf(obj);
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    this.#reindex(key, old, obj);
  }

  /** Same as {@link add}: the cache does not distinguish a first sight from a change. */
  update(obj: T): void {
    this.add(obj);
  }

  /** Removes the object (or the tombstone's key); absent keys are ignored. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.#keyOf(obj);
    const old = this.#items.get(key);
    if (old === undefined) return;
    this.#items.delete(key);
    this.#reindex(key, old, undefined);
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  /** Iterates the cached keys without copying them. */
  keys(): IterableIterator<string> {
    return this.#items.keys();
  }

  byIndex(indexName: string, value: string): T[] {
    const out: T[] = [];
    for (const key of this.#indexEntry(indexName, value)) {
      const obj = this.#items.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  indexKeys(indexName: string, value: string): string[] {
    return [...this.#indexEntry(indexName, value)];
  }

  #indexEntry(indexName: string, value: string): Iterable<string> {
    const index = this.#indices.get(indexName);
    if (index === undefined) throw new Error(`index "${indexName}" does not exist`);
    return entryKeys(index.get(value));
  }

  #reindex(key: string, old: T | undefined, next: T | undefined): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name);
      if (index === undefined) continue;
      const before = old === undefined ? [] : fn(old);
      const after = next === undefined ? [] : fn(next);
      // Most updates keep their index values (e.g. namespace, uid): skip the set churn.
      if (sameValues(before, after)) continue;
      removeFromIndex(index, before, key);
      addToIndex(index, after, key);
    }
  }
}

const noKeys: readonly string[] = [];

/**
 * Keys under one index value: a bare string while there is only one, as for unique values like UIDs,
 * so a 10k-object cache does not hold 10k one-element sets.
 */
type IndexEntry = string | Set<string>;

function entryKeys(entry: IndexEntry | undefined): Iterable<string> {
  if (entry === undefined) return noKeys;
  return typeof entry === 'string' ? [entry] : entry;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

function addToIndex(index: Map<string, IndexEntry>, values: readonly string[], key: string): void {
  for (const value of values) {
    const entry = index.get(value);
    if (entry === undefined) index.set(value, key);
    else if (typeof entry === 'string') {
      if (entry !== key) index.set(value, new Set([entry, key]));
    } else entry.add(key);
  }
}

function removeFromIndex(index: Map<string, IndexEntry>, values: readonly string[], key: string): void {
  for (const value of values) {
    const entry = index.get(value);
    if (entry === undefined) continue;
    if (typeof entry === 'string') {
      if (entry === key) index.delete(value);
      continue;
    }
    entry.delete(key);
    // Back to the compact form, and no empty sets left behind by churn.
    if (entry.size === 1) index.set(value, entry.values().next().value as string);
    else if (entry.size === 0) index.delete(value);
  }
}
