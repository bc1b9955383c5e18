/**
 * The API objects a bench run creates. Claims are as small as a real claim gets; foreign pairs are
 * statically bound (pre-bound PV and claim, no class), so no provisioner ever acts on them.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';

/** Label on every object a bench run creates, valued with the run id. */
export const runLabel = 'bench.kube-provisioner.io/run';

/** Label on the ceilings' bare PVs, valued with the run id: they are deleted apart from the rest. */
export const ceilingLabel = 'bench.kube-provisioner.io/ceiling';

/** An Immediate class of `provisionerName` that deletes volumes with their claims. */
export function benchStorageClass(name: string, provisionerName: string, runId: string): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, labels: { [runLabel]: runId } },
    provisioner: provisionerName,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}

/** Names `<prefix>-0` … `<prefix>-(count-1)`. */
export function numberedNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
}

/** A 1 MiB ReadWriteOnce claim of `className`. */
export function benchClaim(
  name: string,
  namespace: string,
  className: string,
  labels: Readonly<Record<string, string>>,
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, labels: { ...labels } },
    spec: {
      storageClassName: className,
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Mi' } },
    },
  };
}

/** A provisioned PV's shape under a new name, with no claim: what the ceiling's bare client creates. */
export function ceilingVolume(template: V1PersistentVolume, name: string, runId: string): V1PersistentVolume {
  const { claimRef: _claimRef, ...spec } = template.spec ?? {};
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      labels: { ...template.metadata?.labels, [runLabel]: runId, [ceilingLabel]: runId },
      annotations: { ...template.metadata?.annotations },
    },
    spec,
  };
}

/** A PV and a claim bound to each other from the start, in no class: another workload's volume. */
export function foreignPair(
  index: number,
  namespace: string,
  runId: string,
): { readonly volume: V1PersistentVolume; readonly claim: V1PersistentVolumeClaim } {
  const name = `foreign-${runId}-${index}`;
  const labels = { [runLabel]: runId };
  return {
    volume: {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, labels },
      spec: {
        storageClassName: '',
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        hostPath: { path: `/srv/foreign/${name}`, type: 'DirectoryOrCreate' },
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name },
      },
    },
    claim: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace, labels },
      spec: {
        storageClassName: '',
        volumeName: name,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    },
  };
}
