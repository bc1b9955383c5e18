/** Provisions each claim as a directory under `root`, exposed as a hostPath PV. */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  OperationContext,
  Provisioner,
  ProvisionOptions,
  ProvisionResult,
} from '@kube-provisioner/controller';
import { IgnoredError } from '@kube-provisioner/controller';
import type { V1PersistentVolume } from '@kubernetes/client-node';

export class DirectoryProvisioner implements Provisioner {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  // Idempotent: the controller may call again for the same claim.
  async provision(options: ProvisionOptions, _context: OperationContext): Promise<ProvisionResult> {
    const path = join(this.#root, options.pvName);
    await mkdir(path, { recursive: true });
    const { storageClass, pvc } = options;
    return {
      pv: {
        metadata: { name: options.pvName },
        spec: {
          capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
          accessModes: [...(pvc.spec?.accessModes ?? ['ReadWriteOnce'])],
          persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
          mountOptions: [...(storageClass.mountOptions ?? [])],
          volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
          hostPath: { path, type: 'DirectoryOrCreate' },
        },
      },
    };
  }

  async delete(pv: Readonly<V1PersistentVolume>, _context: OperationContext): Promise<void> {
    const path = pv.spec?.hostPath?.path;
    if (path === undefined || !path.startsWith(`${this.#root}/`))
      throw new IgnoredError('not under our root');
    await rm(path, { recursive: true, force: true });
  }
}
