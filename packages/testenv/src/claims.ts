/** PersistentVolumeClaim steps that every provisioner end-to-end test repeats. */
import { CoreV1Api, type KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { waitFor } from './wait-for.ts';

/** The claim {@link bindClaim} creates. */
export interface ClaimSpec {
  readonly namespace: string;
  readonly name: string;
  readonly storageClassName: string;
  /** Default `ReadWriteMany`. */
  readonly accessModes?: readonly string[];
  /** Default `1Gi`. */
  readonly storage?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  /** How long binding may take; default 90 s. */
  readonly timeoutMs?: number;
}

const defaultTimeoutMs = 90_000;

/** Creates the claims `names` of one class and namespace at once (a burst, as a workload would). */
export async function createClaims(
  kubeConfig: KubeConfig,
  spec: Omit<ClaimSpec, 'name' | 'timeoutMs'> & { readonly names: readonly string[] },
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await Promise.all(spec.names.map((name) => createClaim(core, { ...spec, name })));
}

async function createClaim(core: CoreV1Api, spec: Omit<ClaimSpec, 'timeoutMs'>): Promise<void> {
  await core.createNamespacedPersistentVolumeClaim({
    namespace: spec.namespace,
    body: {
      metadata: { name: spec.name, ...(spec.annotations ? { annotations: { ...spec.annotations } } : {}) },
      spec: {
        storageClassName: spec.storageClassName,
        accessModes: [...(spec.accessModes ?? ['ReadWriteMany'])],
        resources: { requests: { storage: spec.storage ?? '1Gi' } },
      },
    },
  });
}

/** Creates a claim, waits until it is Bound, and returns its PersistentVolume. */
export async function bindClaim(kubeConfig: KubeConfig, spec: ClaimSpec): Promise<V1PersistentVolume> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const { namespace, name } = spec;
  await createClaim(core, spec);
  const volumeName = await waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
    },
    { timeoutMs: spec.timeoutMs ?? defaultTimeoutMs, description: `claim ${namespace}/${name} to be Bound` },
  );
  return core.readPersistentVolume({ name: volumeName });
}

/** Deletes a bound claim and waits until the provisioner has deleted its PersistentVolume. */
export async function deleteClaimAndVolume(
  kubeConfig: KubeConfig,
  pv: V1PersistentVolume,
  timeoutMs: number = defaultTimeoutMs,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const claim = pv.spec?.claimRef;
  if (!claim?.namespace || !claim.name) throw new Error(`PV ${pv.metadata?.name} has no claim reference`);
  await core.deleteNamespacedPersistentVolumeClaim({ namespace: claim.namespace, name: claim.name });
  await waitFor(
    async () => {
      const volumes = await core.listPersistentVolume();
      return !volumes.items.some((volume) => volume.metadata?.name === pv.metadata?.name);
    },
    { timeoutMs, description: `PV ${pv.metadata?.name} to be deleted` },
  );
}
