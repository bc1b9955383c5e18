/**
 * Client-go's shared index informer: a reflector that lists then watches (with bookmarks, relisting on
 * `410 Gone`), an indexed cache, per-handler buffers, tombstones and resync; a factory sharing one
 * informer per resource; and {@link withoutManagedFields} to keep `managedFields` out of a cache.
 *
 * Stability: experimental. No package outside the controller imports this entry point; its names and
 * signatures may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { EventHandler, HandlerRegistration } from './event-handler.ts';
export type { InformerFactoryOptions, InformerScope } from './informer-factory.ts';
export { SharedInformerFactory } from './informer-factory.ts';
export type { KeyFunc } from './keys.ts';
export { deletionHandlingMetaNamespaceKey, metaNamespaceKey } from './keys.ts';
export type { ReflectorOptions, ReflectorStats } from './reflector.ts';
export { VeryShortWatchError } from './reflector.ts';
export type { SharedInformerOptions } from './shared-informer.ts';
export { SharedInformer } from './shared-informer.ts';
export type { Indexers, IndexFunc, ReadonlyIndexer } from './store.ts';
export { indexByNamespace, indexByUid, namespaceIndex, uidIndex } from './store.ts';
export { DeletedFinalStateUnknown, isDeletedFinalStateUnknown, unwrapTombstone } from './tombstone.ts';
export type { WaitForCacheSyncOptions } from './wait-for-cache-sync.ts';
export { waitForCacheSync } from './wait-for-cache-sync.ts';
export { withoutManagedFields } from './without-managed-fields.ts';
