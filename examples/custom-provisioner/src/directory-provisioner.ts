/** Provisions each claim as a directory under `root`, exposed as a hostPath PV. */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProvisionOptions, ProvisionResult } from '@kube-provisioner/controller';
import { IgnoredError, type Provisioner, persistentVolumeFor } from '@kube-provisioner/controller';
import type { V1PersistentVolume } from '@kubernetes/client-node';

export class DirectoryProvisioner implements Provisioner {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  // Idempotent: the controller may call again for the same claim.
  async provision(options: ProvisionOptions): Promise<ProvisionResult> {
    const path = join(this.#root, options.pvName);
    await mkdir(path, { recursive: true });
    return { pv: persistentVolumeFor(options, { hostPath: { path, type: 'DirectoryOrCreate' } }) };
  }

  async delete(pv: Readonly<V1PersistentVolume>): Promise<void> {
    const path = pv.spec?.hostPath?.path;
    if (path === undefined || !path.startsWith(`${this.#root}/`))
      throw new IgnoredError('not under our root');
    await rm(path, { recursive: true, force: true });
  }
}
