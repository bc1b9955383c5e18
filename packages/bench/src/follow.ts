/**
 * Follows changes of a resource from now on: a one-item list for the current resourceVersion, then
 * watches resumed from the last version seen until the signal aborts. Existing objects are not
 * replayed: the bench only times what happens after it starts watching.
 */
import type { KubeObject, ResourceClient } from '@kube-provisioner/controller/client';
import type { TimelineEventType } from './claim-timeline.ts';

/** Receives each change with the moment (`performance.now()`) it arrived. */
export type ChangeHandler<T> = (type: TimelineEventType, object: T, at: number) => void;

/**
 * Streams changes of `client`'s objects (in `namespace`, if given) to `onChange` until `signal`
 * aborts. Rejects on a watch ERROR event, e.g. 410 Gone: the timeline would have a gap.
 */
export async function followChanges<T extends KubeObject>(
  client: ResourceClient<T>,
  namespace: string | undefined,
  onChange: ChangeHandler<T>,
  signal: AbortSignal,
): Promise<void> {
  const scope = namespace === undefined ? {} : { namespace };
  let resourceVersion = (await client.list({ ...scope, limit: 1, signal })).metadata.resourceVersion;
  while (!signal.aborted) {
    await client.watch(
      { ...scope, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300, signal },
      (event) => {
        const at = performance.now();
        if (event.type === 'ERROR') {
          throw new Error(
            `watch of ${client.descriptor.plural} failed: ${event.object.message ?? 'no message'}`,
          );
        }
        resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
        if (event.type !== 'BOOKMARK') onChange(event.type, event.object, at);
      },
    );
  }
}
