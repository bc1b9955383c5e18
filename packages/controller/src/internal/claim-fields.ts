/** What the controller reads from a claim: class, requested provisioner, selected node, claim reference. */
import type { V1ObjectReference, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  annAlphaSelectedNode,
  annBetaStorageClass,
  annBetaStorageProvisioner,
  annSelectedNode,
  annStorageProvisioner,
} from '../wire-names.ts';

/** The claim's class name: the beta annotation when present, else `spec.storageClassName`, else `''`. */
export function claimClassName(claim: Readonly<V1PersistentVolumeClaim>): string {
  const annotations = claim.metadata?.annotations;
  if (annotations !== undefined && Object.hasOwn(annotations, annBetaStorageClass)) {
    return annotations[annBetaStorageClass] ?? '';
  }
  return claim.spec?.storageClassName ?? '';
}

/** The provisioner the PV controller asked for (GA annotation, else beta), or `undefined`. */
export function requestedProvisioner(claim: Readonly<V1PersistentVolumeClaim>): string | undefined {
  const annotations = claim.metadata?.annotations ?? {};
  return annotations[annStorageProvisioner] ?? annotations[annBetaStorageProvisioner];
}

/** Whether the scheduler selected a node: the GA annotation is present and non-empty. Only this gates. */
export function hasSelectedNode(claim: Readonly<V1PersistentVolumeClaim>): boolean {
  return (claim.metadata?.annotations?.[annSelectedNode] ?? '') !== '';
}

/** Whether the GA selected-node annotation is present, even empty: the condition for a reschedule. */
export function hasSelectedNodeAnnotation(claim: Readonly<V1PersistentVolumeClaim>): boolean {
  const annotations = claim.metadata?.annotations;
  return annotations !== undefined && Object.hasOwn(annotations, annSelectedNode);
}

/** The selected node's name: GA annotation, else the alpha one, else `''`. */
export function selectedNodeName(claim: Readonly<V1PersistentVolumeClaim>): string {
  const annotations = claim.metadata?.annotations ?? {};
  return annotations[annSelectedNode] ?? annotations[annAlphaSelectedNode] ?? '';
}

/** Whether the claim asks for a raw block volume. */
export function isBlockClaim(claim: Readonly<V1PersistentVolumeClaim>): boolean {
  return claim.spec?.volumeMode === 'Block';
}

/** `namespace/name`, the form used in event messages and logs. */
export function claimKey(claim: Readonly<V1PersistentVolumeClaim>): string {
  return `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;
}

/**
 * The `spec.claimRef` written on a provisioned PV, built locally (never from `selfLink`).
 * @throws Error when the claim lacks a name or UID, so the failure comes before anything is created.
 */
export function claimReference(claim: Readonly<V1PersistentVolumeClaim>): V1ObjectReference {
  const metadata = claim.metadata;
  if (!metadata?.name || !metadata.uid) {
    throw new Error('cannot build a claim reference: the claim has no name or uid');
  }
  const ref: V1ObjectReference = {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    name: metadata.name,
    uid: metadata.uid,
  };
  if (metadata.namespace !== undefined) ref.namespace = metadata.namespace;
  if (metadata.resourceVersion !== undefined) ref.resourceVersion = metadata.resourceVersion;
  return ref;
}

/** Label values of the claim metrics: `spec.storageClassName` (no annotation) and `spec.dataSource.kind`. */
export function claimMetricLabels(claim: Readonly<V1PersistentVolumeClaim>): {
  class: string;
  source: string;
} {
  return { class: claim.spec?.storageClassName ?? '', source: claim.spec?.dataSource?.kind ?? '' };
}

/** The default PV name, `pvc-<claim UID>`. */
export function defaultVolumeName(claim: Readonly<V1PersistentVolumeClaim>): string {
  return `pvc-${claim.metadata?.uid ?? ''}`;
}
