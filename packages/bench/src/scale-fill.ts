/**
 * Fills the cluster with foreign PV/PVC pairs bound to each other as the PV binder leaves them: the
 * claim annotated bind-completed and naming the PV, the PV's claimRef carrying the claim's UID. Only
 * the statuses (Bound) the binder would write are left out: two more requests per pair would double
 * the time a 100 000-pair fill takes, for about 100 bytes less per pair than in a real cluster.
 * Creating them without the UID and leaving the binding to kube-controller-manager would cost it
 * three writes per pair, for minutes per thousand pairs.
 */
import { type KubeApiClient, resources } from '@kube-provisioner/controller/client';
import { forEachConcurrently } from './concurrency.ts';
import { foreignPair } from './fixtures.ts';

/**
 * Requests in flight. kube-apiserver and etcd share the machine's cores with the bench; beyond a few
 * dozen more only queue in the API server.
 */
export const fillConcurrency = 48;

/** The binder's annotation on a claim it has bound (a pre-bound PV gets none). */
const bindCompleted = 'pv.kubernetes.io/bind-completed';

/** Creates pairs `from` … `to - 1` of run `runId` in `namespace`, calling `onPair` after each. */
export async function fillForeignPairs(
  api: KubeApiClient,
  namespace: string,
  runId: string,
  range: { readonly from: number; readonly to: number },
  onPair: () => void,
): Promise<void> {
  const claims = api.resource(resources.persistentVolumeClaims);
  const volumes = api.resource(resources.persistentVolumes);
  const indexes = Array.from({ length: range.to - range.from }, (_, offset) => range.from + offset);
  await forEachConcurrently(indexes, fillConcurrency, async (index) => {
    const { volume, claim } = foreignPair(index, namespace, runId);
    const created = await claims.create(
      { ...claim, metadata: { ...claim.metadata, annotations: { [bindCompleted]: 'yes' } } },
      { namespace },
    );
    const spec = volume.spec ?? {};
    await volumes.create({
      ...volume,
      spec: { ...spec, claimRef: { ...spec.claimRef, uid: created.metadata?.uid ?? '' } },
    });
    onPair();
  });
}
