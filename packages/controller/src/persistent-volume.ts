/**
 * The part of a dynamically provisioned PersistentVolume that comes from its claim and class rather
 * than from the storage behind it.
 */
import type { V1PersistentVolume, V1PersistentVolumeSpec } from '@kubernetes/client-node';
import type { ProvisionOptions } from './provisioner.ts';

/**
 * The PV a provisioner returns for `options`: named `pvName`, sized and moded as the claim requests,
 * with the class's reclaim policy (default `Delete`) and mount options, in `Filesystem` mode.
 * `spec` adds the volume source (`nfs`, `hostPath`, …) and may override any of these fields.
 * Arrays are copied, so the PV shares nothing with the frozen claim and class.
 */
export function persistentVolumeFor(
  options: Pick<ProvisionOptions, 'pvName' | 'pvc' | 'storageClass'>,
  spec: V1PersistentVolumeSpec,
  annotations?: Readonly<Record<string, string>>,
): V1PersistentVolume {
  const { pvc, storageClass } = options;
  const storage = pvc.spec?.resources?.requests?.storage;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: options.pvName,
      ...(annotations === undefined ? {} : { annotations: { ...annotations } }),
    },
    spec: {
      capacity: storage === undefined ? {} : { storage },
      accessModes: [...(pvc.spec?.accessModes ?? [])],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      volumeMode: 'Filesystem',
      ...(storageClass.mountOptions?.length ? { mountOptions: [...storageClass.mountOptions] } : {}),
      ...spec,
    },
  };
}
