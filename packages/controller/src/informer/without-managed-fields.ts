/**
 * A resource client whose LIST and WATCH results carry no `metadata.managedFields`: client-go's
 * informer `TransformFunc` idea, applied where the objects enter a cache. Server-side-apply
 * bookkeeping is often the largest part of a claim or a PV and no controller logic reads it, so a
 * cache of 10 000 objects need not keep it. LIST items are trimmed as each is decoded (the list's
 * `transform`), so a whole list's managed fields never live at once. Single reads and the results
 * of writes keep it.
 *
 * Objects without the field are stored as they are. An update sent from a trimmed object leaves the
 * server's managed fields unchanged: the API server keeps them when a request omits them.
 */
import type { KubeObject, ResourceClient } from '../client/resource-client.ts';

/** `client`, with `metadata.managedFields` removed from what `list` and `watch` deliver. */
export function withoutManagedFields<T extends KubeObject>(client: ResourceClient<T>): ResourceClient<T> {
  return {
    descriptor: client.descriptor,
    get: (name, options) => client.get(name, options),
    create: (object, options) => client.create(object, options),
    update: (object, options) => client.update(object, options),
    patch: (name, patch, type, options) => client.patch(name, patch, type, options),
    delete: (name, options) => client.delete(name, options),
    list: async (options = {}) => {
      const { transform } = options;
      const list = await client.list({
        ...options,
        omitManagedFields: true,
        transform: transform === undefined ? trimManagedFields : (item) => transform(trimManagedFields(item)),
      });
      // Again on the result, for a client that ignores `transform`; a no-op on trimmed items.
      return { ...list, items: list.items.map(trimManagedFields) };
    },
    watch: (options, onEvent) =>
      client.watch(options, (event) =>
        onEvent(
          event.type === 'ERROR' ? event : { type: event.type, object: trimManagedFields(event.object) },
        ),
      ),
  };
}

/** `object` without `metadata.managedFields`; a shallow copy only when there was something to drop. */
export function trimManagedFields<T extends KubeObject>(object: T): T {
  const metadata = object.metadata;
  if (metadata?.managedFields === undefined) return object;
  const { managedFields: _, ...rest } = metadata;
  return { ...object, metadata: rest };
}
