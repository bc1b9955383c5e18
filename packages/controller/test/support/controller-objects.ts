/**
 * Claims, classes and volumes as the API server holds them, built positionally for this package's
 * controller tests, which need many of them. The public kit (`/testing`) builds them from objects.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';
import { annDynamicallyProvisioned, annStorageProvisioner } from '../../src/wire-names.ts';

/** A StorageClass of `provisioner` with reclaim policy `Delete`; `extra` overrides any field. */
export function newStorageClass(
  name: string,
  provisioner: string,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, uid: `uid-${name}` },
    provisioner,
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

/** A VolumeAttributesClass for `driverName` (a provisioner name) with `parameters`. */
export function newVolumeAttributesClass(
  name: string,
  driverName: string,
  parameters: Readonly<Record<string, string>> = {},
): V1VolumeAttributesClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttributesClass',
    metadata: { name, uid: `uid-${name}` },
    driverName,
    parameters: { ...parameters },
  };
}

/**
 * A claim in namespace `default` of class `className`, asking for 1Gi `ReadWriteOnce`. With
 * `provisioner`, it carries the `volume.kubernetes.io/storage-provisioner` annotation the PV controller
 * sets; with `volumeName`, it is already bound to that PV.
 */
export function newClaim(
  name: string,
  uid: string,
  className: string,
  provisioner: string | undefined,
  volumeName = '',
  annotations: Readonly<Record<string, string>> = {},
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'default',
      uid,
      annotations:
        provisioner === undefined
          ? { ...annotations }
          : { [annStorageProvisioner]: provisioner, ...annotations },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: className,
      ...(volumeName ? { volumeName } : {}),
    },
  };
}

/** Fields of {@link newVolume} beyond the common ones. */
export interface NewVolumeExtra {
  readonly finalizers?: readonly string[];
  readonly deletionTimestamp?: Date;
  /** Makes it a CSI volume of this driver instead of a hostPath one. */
  readonly csiDriver?: string;
}

/** A 1Gi PV in `phase` with reclaim policy `policy` and the given annotations. */
export function newVolume(
  name: string,
  phase: string,
  policy: string,
  annotations: Readonly<Record<string, string>>,
  extra: NewVolumeExtra = {},
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      uid: `uid-${name}`,
      annotations: { ...annotations },
      ...(extra.finalizers ? { finalizers: [...extra.finalizers] } : {}),
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}),
    },
    spec: {
      persistentVolumeReclaimPolicy: policy,
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      ...(extra.csiDriver
        ? { csi: { driver: extra.csiDriver, volumeHandle: name } }
        : { hostPath: { path: `/tmp/${name}` } }),
    },
    status: { phase },
  };
}

/** The `pv.kubernetes.io/provisioned-by` annotation naming `by`. */
export function dynamicallyProvisioned(by: string): Record<string, string> {
  return { [annDynamicallyProvisioned]: by };
}
