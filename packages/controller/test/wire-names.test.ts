import * as controller from '@kube-provisioner/controller/wire-names';
import { describe, expect, it } from 'vitest';

describe('wire names', () => {
  it('match sig-storage-lib-external-provisioner v13 exactly', () => {
    expect(controller.annStorageProvisioner).toBe('volume.kubernetes.io/storage-provisioner');
    expect(controller.annBetaStorageProvisioner).toBe('volume.beta.kubernetes.io/storage-provisioner');
    expect(controller.annSelectedNode).toBe('volume.kubernetes.io/selected-node');
    expect(controller.annAlphaSelectedNode).toBe('volume.alpha.kubernetes.io/selected-node');
    expect(controller.annBetaStorageClass).toBe('volume.beta.kubernetes.io/storage-class');
    expect(controller.annDynamicallyProvisioned).toBe('pv.kubernetes.io/provisioned-by');
    expect(controller.annMigratedTo).toBe('pv.kubernetes.io/migrated-to');
    expect(controller.finalizerPV).toBe('external-provisioner.volume.kubernetes.io/finalizer');
  });
});
