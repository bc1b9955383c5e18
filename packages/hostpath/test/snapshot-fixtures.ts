/** `DirectorySnapshot`s for the hostpath unit tests: an in-memory resource and a snapshot object. */
import type { OperationContext } from '@kube-provisioner/controller';
import { ApiError, type ResourceClient } from '@kube-provisioner/controller/client';
import {
  type DirectorySnapshot,
  directorySnapshots,
  type SnapshotTaker,
} from '@kube-provisioner/controller/snapshot';

const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });

/** An in-memory `directorysnapshots` resource: its client, objects by name, and every patch sent. */
export interface SnapshotStore {
  /** `get`, `list` and `patch`; the other calls reject. */
  readonly client: ResourceClient<DirectorySnapshot>;
  readonly objects: Map<string, DirectorySnapshot>;
  readonly writes: unknown[];
}

/** An in-memory `directorysnapshots` resource applying merge patches as the API server does, as far as used. */
export function snapshotStore(...initial: DirectorySnapshot[]): SnapshotStore {
  const objects = new Map(initial.map((object) => [object.metadata?.name ?? '', structuredClone(object)]));
  let version = 1;
  const writes: unknown[] = [];
  const unsupported = async (): Promise<never> => {
    throw new Error('not supported by this fake');
  };
  const client: ResourceClient<DirectorySnapshot> = {
    descriptor: directorySnapshots,
    watch: unsupported,
    create: unsupported,
    update: unsupported,
    delete: unsupported,
    async get(name) {
      const object = objects.get(name);
      if (object === undefined) throw notFound();
      return structuredClone(object);
    },
    async list() {
      return {
        metadata: { resourceVersion: String(version) },
        items: [...objects.values()].map((object) => structuredClone(object)),
      };
    },
    async patch(name, patch, _type, options = {}) {
      const object = objects.get(name);
      if (object === undefined) throw notFound();
      writes.push(patch);
      const { metadata = {}, status = {} } = patch as DirectorySnapshot & {
        metadata?: Record<string, unknown>;
      };
      if (
        metadata.resourceVersion !== undefined &&
        metadata.resourceVersion !== object.metadata?.resourceVersion
      ) {
        throw new ApiError(409, 'conflict', { reason: 'Conflict' });
      }
      if (options.subresource === 'status') object.status = { ...object.status, ...status };
      else {
        const annotations = { ...object.metadata?.annotations, ...(metadata.annotations as object) };
        const finalizers = (metadata.finalizers as string[] | undefined) ?? object.metadata?.finalizers ?? [];
        object.metadata = { ...object.metadata, annotations, finalizers };
      }
      object.metadata = { ...object.metadata, resourceVersion: String(++version) };
      if (
        object.metadata.deletionTimestamp !== undefined &&
        (object.metadata.finalizers ?? []).length === 0
      ) {
        objects.delete(name);
      }
      return structuredClone(object);
    },
  };
  return { client, objects, writes };
}

/** Snapshot `team-a/snap` (UID `snap-uid`) of claim `claimName`. */
export function snapshotOf(claimName: string, extra: Partial<DirectorySnapshot> = {}): DirectorySnapshot {
  return {
    metadata: { name: 'snap', namespace: 'team-a', uid: 'snap-uid', resourceVersion: '1' },
    spec: { source: { persistentVolumeClaimName: claimName } },
    ...extra,
  };
}

/** Marks the store's snapshot as being deleted, with `policy`. */
export function deleting(store: SnapshotStore, policy?: 'Retain'): void {
  const snapshot = store.objects.get('snap');
  if (snapshot?.metadata === undefined) throw new Error('no snapshot');
  snapshot.metadata.deletionTimestamp = new Date();
  if (policy) snapshot.spec = { ...snapshot.spec, deletionPolicy: policy };
}

/** One pass of `taker` over every snapshot of `store`, in turn, as the watch would queue them. */
export async function reconcileEach(
  taker: Pick<SnapshotTaker<unknown>, 'reconcile'>,
  store: SnapshotStore,
  context: OperationContext,
): Promise<void> {
  for (const snapshot of [...store.objects.values()])
    await taker.reconcile(structuredClone(snapshot), context);
}
