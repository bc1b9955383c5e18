/**
 * `DirectorySnapshot`s as a user handles them: the CRD applied from the shipped manifest, objects
 * created, read and deleted through the API server (`snapshot.kube-provisioner.io/v1alpha1`, as the
 * hostpath reference documents them). Nothing here imports the provisioner's own snapshot code, so
 * the suite judges the API users see, wherever the implementation lives.
 */
import { readFile } from 'node:fs/promises';
import { applyManifests, waitFor } from '@kube-provisioner/testenv';
import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  loadAllYaml,
} from '@kubernetes/client-node';

/** The API group of `DirectorySnapshot`. */
export const snapshotApiGroup = 'snapshot.kube-provisioner.io';

const resource = { group: snapshotApiGroup, version: 'v1alpha1', plural: 'directorysnapshots' };

/** The fields of a `DirectorySnapshot` the suite reads. */
export interface SnapshotObject {
  readonly metadata?: {
    readonly name?: string;
    readonly uid?: string;
    readonly finalizers?: readonly string[];
  };
  readonly spec?: { readonly source?: { readonly persistentVolumeClaimName?: string } };
  readonly status?: {
    readonly readyToUse?: boolean;
    readonly restoreSize?: string;
    readonly creationTime?: string;
    readonly error?: { readonly message?: string } | null;
  };
}

/** Applies the CRD manifest at `path` and waits until the API server serves the kind. */
export async function installSnapshotCrd(kubeConfig: KubeConfig, path: string): Promise<void> {
  const manifest = await readFile(path, 'utf8');
  await applyManifests(kubeConfig, loadAllYaml(manifest) as KubernetesObject[]);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  await waitFor(
    () =>
      custom.listClusterCustomObject(resource).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000, description: 'the DirectorySnapshot CRD to be served' },
  );
}

/** The `DirectorySnapshot`s of one namespace. */
export class DirectorySnapshots {
  readonly namespace: string;
  readonly #custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /** Creates snapshot `name` of claim `claim` (deletion policy `Delete`, the default). */
  async create(name: string, claim: string): Promise<void> {
    await this.#custom.createNamespacedCustomObject({
      ...resource,
      namespace: this.namespace,
      body: {
        apiVersion: `${snapshotApiGroup}/${resource.version}`,
        kind: 'DirectorySnapshot',
        metadata: { name },
        spec: { source: { persistentVolumeClaimName: claim } },
      },
    });
  }

  /** The snapshots of the namespace by name, as the API server has them now. */
  async list(): Promise<Map<string, SnapshotObject>> {
    const list = (await this.#custom.listNamespacedCustomObject({
      ...resource,
      namespace: this.namespace,
    })) as { items: SnapshotObject[] };
    return new Map(list.items.map((snapshot) => [snapshot.metadata?.name ?? '', snapshot]));
  }

  /** Deletes snapshot `name`; one already gone is no error. */
  async delete(name: string): Promise<void> {
    await this.#custom
      .deleteNamespacedCustomObject({ ...resource, namespace: this.namespace, name })
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      });
  }
}
