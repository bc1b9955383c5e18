/**
 * Store keys: `namespace/name` for namespaced objects, `name` for cluster-scoped ones, as client-go's
 * `MetaNamespaceKeyFunc`.
 */
import type { KubeObject } from '../client/resource-client.ts';
import { type DeletedFinalStateUnknown, isDeletedFinalStateUnknown } from './tombstone.ts';

/** Computes the store key of an object. */
export type KeyFunc<T> = (obj: T) => string;

/** `namespace/name`, or `name` when the object has no namespace. Throws when the object has no name. */
export function metaNamespaceKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('object has no metadata.name, so it has no store key');
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * {@link metaNamespaceKey} that also accepts a tombstone and answers its recorded key, so delete
 * handlers can key whatever they receive.
 */
export function deletionHandlingMetaNamespaceKey(
  obj: KubeObject | DeletedFinalStateUnknown<KubeObject>,
): string {
  return isDeletedFinalStateUnknown(obj) ? obj.key : metaNamespaceKey(obj);
}
