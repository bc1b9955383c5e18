/**
 * The API side of an audit: the PersistentVolumes a provisioner made and the claims they name, read
 * with `list` only (paginated), so a read-only role suffices.
 */
import type { KubeApi } from '@kube-provisioner/controller';
import { type ResourceClient, resources } from '@kube-provisioner/controller/client';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';

/** What the API server holds for one provisioner. */
export interface ClusterState {
  /** PVs whose `pv.kubernetes.io/provisioned-by` names the provisioner. */
  readonly volumes: readonly V1PersistentVolume[];
  /** Volume name each existing claim is bound to, by claim UID. */
  readonly boundVolumeOfClaim: ReadonlyMap<string, string>;
}

const pageSize = 500;

/** Every object of `client`, page by page. */
export async function listAll<T extends { metadata?: { name?: string } }>(
  client: ResourceClient<T>,
  signal: AbortSignal | undefined,
): Promise<T[]> {
  const items: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list({
      limit: pageSize,
      ...(continueToken === undefined ? {} : { continue: continueToken }),
      ...(signal === undefined ? {} : { signal }),
    });
    items.push(...page.items);
    continueToken = page.metadata.continue;
  } while (continueToken);
  return items;
}

/** Lists the PVs of `provisionerName` and every claim's bound volume. */
export async function readClusterState(
  api: KubeApi,
  provisionerName: string,
  signal?: AbortSignal,
): Promise<ClusterState> {
  const [volumes, claims] = await Promise.all([
    listAll(api.resource(resources.persistentVolumes), signal),
    listAll(api.resource(resources.persistentVolumeClaims), signal),
  ]);
  return {
    volumes: volumes.filter(
      (pv) => pv.metadata?.annotations?.[annDynamicallyProvisioned] === provisionerName,
    ),
    boundVolumeOfClaim: new Map(
      claims.flatMap((claim: V1PersistentVolumeClaim) => {
        const uid = claim.metadata?.uid;
        const volume = claim.spec?.volumeName;
        return uid && volume ? [[uid, volume] as const] : [];
      }),
    ),
  };
}
