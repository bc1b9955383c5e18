/**
 * Names the controller reads or writes on the wire. They are identical to
 * sig-storage-lib-external-provisioner v13, so a cluster can switch between the Go
 * library and this one without touching existing objects.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

/** PVC annotation set by the PV controller: the provisioner that should provision the claim. */
export const annStorageProvisioner = 'volume.kubernetes.io/storage-provisioner';
/** Beta form of {@link annStorageProvisioner}, read when the GA key is absent. */
export const annBetaStorageProvisioner = 'volume.beta.kubernetes.io/storage-provisioner';
/** PVC annotation set by the scheduler for WaitForFirstConsumer claims. */
export const annSelectedNode = 'volume.kubernetes.io/selected-node';
/** Alpha form of {@link annSelectedNode}; only a fallback for the node name, never a gate. */
export const annAlphaSelectedNode = 'volume.alpha.kubernetes.io/selected-node';
/** Class name annotation, preferred over `spec.storageClassName` on claims and volumes. */
export const annBetaStorageClass = 'volume.beta.kubernetes.io/storage-class';
/** PV annotation naming the provisioner that created it. */
export const annDynamicallyProvisioned = 'pv.kubernetes.io/provisioned-by';
/** PV annotation naming the CSI driver a volume was migrated to. */
export const annMigratedTo = 'pv.kubernetes.io/migrated-to';
/** Finalizer that protects a PV until its backing asset is deleted (KEP-2644). */
export const finalizerPV = 'external-provisioner.volume.kubernetes.io/finalizer';
