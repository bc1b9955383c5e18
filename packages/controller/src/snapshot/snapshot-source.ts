/**
 * Restoring a claim from a `DirectorySnapshot` through the controller's background clones
 * (`CloneJobs`), which read a source as a claim and its PV and protect it with the
 * cloning-protection finalizer. This adapter shows a ready snapshot taken by this provisioner as
 * such a pair: a Bound claim whose PV has the snapshot's restore size, is recorded as
 * `snapshot-<uid>` (the name its ownership record holds) and points at its directory in the snapshot
 * area; the finalizer goes on the snapshot object, so it is not deleted while a restore copies it.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ResourceClient } from '../client/resource-client.ts';
import type { CloneSourceAccess } from '../clone/clone-source.ts';
import { annDynamicallyProvisioned } from '../wire-names.ts';
import { annSnapshotProvisioner, type DirectorySnapshot, snapshotRecordName } from './directory-snapshot.ts';

/** `directorysnapshots` `get` and `patch`. */
export type SnapshotReader = Pick<ResourceClient<DirectorySnapshot>, 'get' | 'patch'>;

/**
 * The directory of a ready snapshot's PV (see {@link snapshotSourceAccess}), as `pathOf` places the
 * snapshot with that namespace and UID (safe-fs's `snapshotPath` fits).
 */
export function snapshotPathOf<Path>(
  pv: Readonly<V1PersistentVolume>,
  pathOf: (namespace: string, uid: string) => Path,
): Path {
  const { namespace = '', uid = '' } = pv.spec?.claimRef ?? {};
  return pathOf(namespace, uid);
}

function asClaim(snapshot: Readonly<DirectorySnapshot>): V1PersistentVolumeClaim {
  const { name = '', namespace = '', uid = '', finalizers = [], deletionTimestamp } = snapshot.metadata ?? {};
  return {
    metadata: { name, namespace, uid, finalizers, ...(deletionTimestamp && { deletionTimestamp }) },
    spec: { volumeName: snapshotRecordName(uid) },
    status: { phase: 'Bound' },
  };
}

function asVolume(snapshot: Readonly<DirectorySnapshot>): V1PersistentVolume {
  const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
  const provisioner = snapshot.metadata?.annotations?.[annSnapshotProvisioner] ?? '';
  return {
    metadata: {
      name: snapshotRecordName(uid ?? ''),
      annotations: { [annDynamicallyProvisioned]: provisioner },
    },
    spec: {
      capacity: { storage: snapshot.status?.restoreSize ?? '' },
      claimRef: { kind: 'DirectorySnapshot', namespace, name, uid },
    },
  };
}

/** A strategic-merge finalizer patch of `CloneJobs` (add, or `$deleteFromPrimitiveList`), applied to `finalizers`. */
function patchedFinalizers(patch: unknown, finalizers: readonly string[]): string[] {
  const metadata = (patch as { metadata?: Record<string, readonly string[] | undefined> }).metadata ?? {};
  const removed = new Set(metadata['$deleteFromPrimitiveList/finalizers'] ?? []);
  const added = (metadata.finalizers ?? []).filter((f) => !finalizers.includes(f));
  return [...finalizers.filter((f) => !removed.has(f)), ...added];
}

/**
 * Clone-source access for restores from `snapshots`: `claims.get` answers with a ready snapshot
 * as a Bound claim, `volumes.get` with its PV; `claims.patch` sets or removes a finalizer on the
 * snapshot (custom resources take no strategic merge patch: it is read, changed and written back
 * under its resourceVersion).
 *
 * @throws from `claims.get`, a plain error (the claim's sync is retried, with an event) while the
 * snapshot is missing or not ready to use.
 */
export function snapshotSourceAccess(snapshots: SnapshotReader): CloneSourceAccess {
  // Filled by each `claims.get`, read by the `volumes.get` that follows it.
  const lastRead = new Map<string, DirectorySnapshot>();
  const read = async (name: string, namespace: string, signal?: AbortSignal) => {
    const snapshot = await snapshots.get(name, { namespace, ...(signal && { signal }) });
    if (snapshot.status?.readyToUse !== true) {
      const why = snapshot.status?.error?.message;
      throw new Error(`snapshot ${namespace}/${name} is not ready to use yet${why ? `: ${why}` : ''}`);
    }
    return snapshot;
  };
  return {
    claims: {
      async get(name, options = {}) {
        const snapshot = await read(name, options.namespace ?? '', options.signal);
        const claim = asClaim(snapshot);
        lastRead.set(claim.spec?.volumeName ?? '', snapshot);
        return claim;
      },
      async patch(name, patch, _type, options = {}) {
        const namespace = options.namespace ?? '';
        const snapshot = await snapshots.get(name, {
          namespace,
          ...(options.signal && { signal: options.signal }),
        });
        const { finalizers = [], resourceVersion } = snapshot.metadata ?? {};
        const wanted = patchedFinalizers(patch, finalizers);
        if (wanted.join('\n') === finalizers.join('\n')) return asClaim(snapshot);
        const body = { metadata: { finalizers: wanted, resourceVersion } };
        return asClaim(await snapshots.patch(name, body, 'merge', options));
      },
    },
    volumes: {
      async get(name) {
        const snapshot = lastRead.get(name);
        lastRead.delete(name);
        if (snapshot === undefined) throw new Error(`${name} is no snapshot read just before`);
        return asVolume(snapshot);
      },
    },
  };
}
