/**
 * A watch stream of the fake API: the tracker's changes to one resource, filtered and typed as the
 * API server sends them (an object leaving the selection is `DELETED`), delivered asynchronously, in
 * order, one at a time; and the handle the fake uses to end, silence or bookmark it.
 */
import type { V1Status } from '@kubernetes/client-node';
import { decodeObject, decodeStatus } from '../client/model-codec.ts';
import type { KubeObject, ResourceDescriptor, WatchEvent, WatchOptions } from '../client/resource-client.ts';
import type { Clock } from '../util/clock.ts';
import { type ObjectTracker, resourceKey, type TrackerEvent } from './object-tracker.ts';
import { objectSelector } from './selectors.ts';
import { failureStatus } from './status-error.ts';

/** A streaming watch, as the fake's server side sees it. */
export interface ActiveWatch {
  readonly allowBookmarks: boolean;
  /** Drops every later event while the stream stays open. */
  silence(): void;
  bookmark(resourceVersion: number): void;
  close(status?: V1Status): void;
}

/** Where a watch reads its events and registers while it streams. */
export interface WatchSource {
  readonly tracker: ObjectTracker;
  readonly clock: Clock;
  readonly watches: Set<ActiveWatch>;
}

/** Streams `descriptor` changes to `onEvent` per the watch options; settles when the watch ends. */
export function streamWatch<T extends KubeObject>(
  source: WatchSource,
  descriptor: ResourceDescriptor<T>,
  options: WatchOptions,
  onEvent: (event: WatchEvent<T>) => void,
): Promise<void> {
  const { tracker, clock, watches } = source;
  const selects = objectSelector(descriptor, options);
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
      watches.delete(watch);
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
      if (idleMs !== undefined && idleMs > 0) cancelIdle = clock.setTimer(() => close(), idleMs);
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
    const unsubscribe = tracker.subscribe(deliver);
    const cancelTimeout =
      options.timeoutSeconds !== undefined
        ? clock.setTimer(() => close(), options.timeoutSeconds * 1000)
        : () => {};
    if (options.signal?.aborted) {
      finish();
      return;
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    watches.add(watch);
    armIdle();
    // Subscribing and replaying in one synchronous step leaves no gap between them.
    const from = options.resourceVersion;
    if (!from || from === '0') {
      for (const object of tracker.list(descriptor, options.namespace)) {
        if (selects(object)) push({ type: 'ADDED', object: decodeObject(object, descriptor) });
      }
      return;
    }
    try {
      for (const event of tracker.eventsSince(descriptor, Number(from))) deliver(event);
    } catch (err) {
      close((err as { status?: V1Status }).status ?? failureStatus('InternalError', String(err)));
    }
  });
}
