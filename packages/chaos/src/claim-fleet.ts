/**
 * The claims of one chaos target: created and deleted in waves through the admin client (retried
 * across a kube-apiserver restart), followed until Bound, with the volume each was first bound to
 * remembered so a re-binding is caught.
 */

import { waitFor } from '@kube-provisioner/testenv';
import {
  CoreV1Api,
  type KubeConfig,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import type { DataFate } from './chaos-targets.ts';
import { snapshotApiGroup } from './directory-snapshots.ts';

/** One claim of the fleet. */
export interface FleetClaim {
  readonly name: string;
  readonly fate: DataFate;
  readonly storageClassName: string;
  /** Annotations of the claim, which a class's pathPattern may render. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** A claim of the same namespace to clone (`dataSource` of kind PersistentVolumeClaim). */
  readonly cloneOf?: string;
  /** A `DirectorySnapshot` of the same namespace to restore (`dataSourceRef`). */
  readonly restoreFrom?: string;
  uid: string | undefined;
  /** The PV it was first seen bound to. */
  volumeName: string | undefined;
  /** Set when a later look found it bound to another PV. */
  reboundTo: string | undefined;
}

/** A claim not created yet, of `fate` (default `delete`), with the options given. */
export function newClaim(
  name: string,
  storageClassName: string,
  options: Pick<FleetClaim, 'annotations' | 'cloneOf' | 'restoreFrom'> & { readonly fate?: DataFate } = {},
): FleetClaim {
  const { fate = 'delete', ...rest } = options;
  return {
    name,
    fate,
    storageClassName,
    ...rest,
    uid: undefined,
    volumeName: undefined,
    reboundTo: undefined,
  };
}

const retryWindowMs = 120_000;
const concurrency = 10;

/** Runs `task` over `items`, `concurrency` at a time. */
export async function forEachLimited<T>(
  items: readonly T[],
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

function statusCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number'
    ? err.code
    : undefined;
}

/**
 * Calls `request` until it succeeds or answers with one of `done` (e.g. 409 for a create that did
 * happen before a connection broke); other errors are retried while the API server restarts.
 */
async function persistently(
  request: () => Promise<unknown>,
  done: readonly number[],
  what: string,
): Promise<void> {
  await waitFor(
    async () => {
      try {
        await request();
        return true;
      } catch (err) {
        if (done.includes(statusCode(err) ?? 0)) return true;
        throw err;
      }
    },
    { timeoutMs: retryWindowMs, intervalMs: 500, description: what },
  );
}

/** The claims of one target in one namespace. */
export class ClaimFleet {
  readonly namespace: string;
  readonly claims: readonly FleetClaim[];
  readonly #core: CoreV1Api;

  constructor(kubeConfig: KubeConfig, namespace: string, claims: readonly FleetClaim[]) {
    this.namespace = namespace;
    this.claims = claims;
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Creates `claims`. */
  async create(claims: readonly FleetClaim[]): Promise<void> {
    await forEachLimited(claims, (claim) =>
      persistently(
        () =>
          this.#core.createNamespacedPersistentVolumeClaim({
            namespace: this.namespace,
            body: {
              metadata: { name: claim.name, annotations: { ...claim.annotations } },
              spec: {
                storageClassName: claim.storageClassName,
                accessModes: ['ReadWriteOnce'],
                resources: { requests: { storage: '1Gi' } },
                ...(claim.cloneOf === undefined
                  ? {}
                  : { dataSource: { kind: 'PersistentVolumeClaim', name: claim.cloneOf } }),
                ...(claim.restoreFrom === undefined
                  ? {}
                  : {
                      dataSourceRef: {
                        apiGroup: snapshotApiGroup,
                        kind: 'DirectorySnapshot',
                        name: claim.restoreFrom,
                      },
                    }),
              },
            },
          }),
        [409],
        `claim ${claim.name} to be created`,
      ),
    );
  }

  /** Asks for `storage` in every claim of `claims` (read, then replace: the request is all that changes). */
  async resize(claims: readonly FleetClaim[], storage: string): Promise<void> {
    await forEachLimited(claims, (claim) =>
      persistently(
        async () => {
          const live = await this.#core.readNamespacedPersistentVolumeClaim({
            namespace: this.namespace,
            name: claim.name,
          });
          await this.#core.replaceNamespacedPersistentVolumeClaim({
            namespace: this.namespace,
            name: claim.name,
            body: { ...live, spec: { ...live.spec, resources: { requests: { storage } } } },
          });
        },
        [],
        `claim ${claim.name} to ask for ${storage}`,
      ),
    );
  }

  /** The claims of the namespace as the API server has them now. */
  async live(): Promise<Map<string, V1PersistentVolumeClaim>> {
    const list = await this.#core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace });
    return new Map(list.items.map((claim) => [claim.metadata?.name ?? '', claim]));
  }

  /** Deletes `claims`. */
  async delete(claims: readonly FleetClaim[]): Promise<void> {
    await forEachLimited(claims, (claim) =>
      persistently(
        () =>
          this.#core.deleteNamespacedPersistentVolumeClaim({ namespace: this.namespace, name: claim.name }),
        [404],
        `claim ${claim.name} to be deleted`,
      ),
    );
  }

  /** Refreshes what every claim is bound to, noting any re-binding. */
  async observe(): Promise<void> {
    const list = await this.#core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace });
    const byName = new Map(list.items.map((claim) => [claim.metadata?.name ?? '', claim]));
    for (const claim of this.claims) {
      const live = byName.get(claim.name);
      if (live?.status?.phase !== 'Bound' || !live.spec?.volumeName) continue;
      claim.uid ??= live.metadata?.uid;
      if (claim.volumeName === undefined) claim.volumeName = live.spec.volumeName;
      else if (claim.volumeName !== live.spec.volumeName) claim.reboundTo = live.spec.volumeName;
    }
  }

  /** Waits until every claim of `claims` has been seen Bound. */
  async waitBound(claims: readonly FleetClaim[], timeoutMs: number): Promise<void> {
    await waitFor(
      async () => {
        await this.observe();
        return claims.every((claim) => claim.volumeName !== undefined);
      },
      {
        timeoutMs,
        intervalMs: 1000,
        description: `${claims.length} claims in ${this.namespace} to be Bound (${claims.filter((c) => c.volumeName === undefined).length} not yet)`,
      },
    );
  }

  /** The PVs by name, listed once (retried across an API server restart). */
  async volumes(): Promise<Map<string, V1PersistentVolume>> {
    const list = await waitFor(() => this.#core.listPersistentVolume(), {
      timeoutMs: retryWindowMs,
      intervalMs: 500,
      description: 'the PV list',
    });
    return new Map(list.items.map((pv) => [pv.metadata?.name ?? '', pv]));
  }

  /** Waits until the PV of every claim of `claims` is gone; returns the names of those left. */
  async volumesLeft(claims: readonly FleetClaim[], timeoutMs: number): Promise<string[]> {
    const left = async (): Promise<string[]> => {
      const volumes = await this.volumes();
      return claims.flatMap((claim) => (volumes.has(claim.volumeName ?? '') ? [claim.volumeName ?? ''] : []));
    };
    try {
      await waitFor(async () => (await left()).length === 0, {
        timeoutMs,
        intervalMs: 1000,
        description: `the PVs of ${claims.length} claims in ${this.namespace} to be deleted`,
      });
      return [];
    } catch {
      return left();
    }
  }
}
