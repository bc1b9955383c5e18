/**
 * Pure decisions about a PersistentVolume: whether it is ours, which finalizers it should carry, and
 * whether its backing asset should be deleted (the provisioner's `shouldDelete` hook aside).
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { annDynamicallyProvisioned, annMigratedTo, finalizerPV } from '../wire-names.ts';

/**
 * Whether this controller manages `volume`: a dynamically provisioned PV whose `provisioned-by` or
 * `migrated-to` names a known provisioner, a static CSI PV of a known driver, or a static PV migrated
 * to a known driver.
 */
export function isProvisionerForVolume(
  volume: Readonly<V1PersistentVolume>,
  known: ReadonlySet<string>,
): boolean {
  const annotations = volume.metadata?.annotations ?? {};
  const migratedTo = annotations[annMigratedTo] ?? '';
  if (Object.hasOwn(annotations, annDynamicallyProvisioned)) {
    return known.has(annotations[annDynamicallyProvisioned] ?? '') || known.has(migratedTo);
  }
  const csi = volume.spec?.csi;
  return csi !== undefined ? known.has(csi.driver) : known.has(migratedTo);
}

/** `finalizers` with `finalizer` appended, and whether that changed anything. Never mutates the input. */
export function addFinalizer(
  finalizers: readonly string[] | undefined,
  finalizer: string,
): { finalizers: string[]; modified: boolean } {
  const current = finalizers ?? [];
  if (current.includes(finalizer)) return { finalizers: [...current], modified: false };
  return { finalizers: [...current, finalizer], modified: true };
}

/** `finalizers` without `finalizer`, and whether that changed anything. Never mutates the input. */
export function removeFinalizer(
  finalizers: readonly string[] | undefined,
  finalizer: string,
): { finalizers: string[]; modified: boolean } {
  const current = finalizers ?? [];
  const kept = current.filter((name) => name !== finalizer);
  return { finalizers: kept, modified: kept.length !== current.length };
}

/**
 * The finalizer list an owned PV should have, or `undefined` when it is already right: ours is added
 * to a bound, live PV with reclaim `Delete` when `addFinalizer` is on, and removed when the option is
 * off (rollback) or the reclaim policy is `Retain` or `Recycle`.
 */
export function desiredFinalizers(
  volume: Readonly<V1PersistentVolume>,
  addFinalizerOption: boolean,
): string[] | undefined {
  const policy = volume.spec?.persistentVolumeReclaimPolicy;
  let finalizers = volume.metadata?.finalizers;
  let modified = false;
  if (
    addFinalizerOption &&
    policy === 'Delete' &&
    volume.metadata?.deletionTimestamp === undefined &&
    volume.status?.phase === 'Bound'
  ) {
    ({ finalizers, modified } = addFinalizer(finalizers, finalizerPV));
  }
  if (!addFinalizerOption || policy === 'Retain' || policy === 'Recycle') {
    ({ finalizers, modified } = removeFinalizer(finalizers, finalizerPV));
  }
  return modified ? (finalizers ?? []) : undefined;
}

/** Whether `volume` carries our finalizer. */
export function hasOurFinalizer(volume: Readonly<V1PersistentVolume>): boolean {
  return volume.metadata?.finalizers?.includes(finalizerPV) ?? false;
}

/**
 * Whether a released volume should be deleted (every rule except the provisioner's hook): not already
 * being deleted (with `addFinalizer`: unless our finalizer still holds it), phase `Released`, reclaim
 * policy `Delete`.
 */
export function isVolumeDeletable(
  volume: Readonly<V1PersistentVolume>,
  addFinalizerOption: boolean,
): boolean {
  const deleting = volume.metadata?.deletionTimestamp !== undefined;
  if (deleting && !(addFinalizerOption && hasOurFinalizer(volume))) return false;
  return volume.status?.phase === 'Released' && volume.spec?.persistentVolumeReclaimPolicy === 'Delete';
}
