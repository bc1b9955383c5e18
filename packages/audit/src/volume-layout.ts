/**
 * Where each provisioner kind keeps a PV's data, relative to the root the audit reads: the one piece
 * of provisioner knowledge the audit needs. A PV's stored path is trusted no more than the
 * provisioners trust it: it must lie strictly below the export or host root.
 */
import { normalizeBasePath, relativePathUnder } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/**
 * `nfs`: nfs-subdir and nfs-client; a PV's `spec.nfs.path` is below `exportPath` (`NFS_PATH`) and,
 * when `server` is given, `spec.nfs.server` must name it.
 */
export interface NfsLayout {
  readonly kind: 'nfs';
  /** `NFS_PATH`, the exported path on the server. */
  readonly exportPath: string;
  /** `NFS_SERVER`; `undefined` accepts any server. */
  readonly server?: string | undefined;
}

/**
 * `hostpath`: kube-hostpath-provisioner; a PV's `spec.hostPath.path` or `spec.local.path` is below
 * `hostRoot` (`--root` of the provisioner). With `node`, only PVs recorded on that node are audited
 * (per-node mode: each node's root holds its own volumes).
 */
export interface HostPathLayout {
  readonly kind: 'hostpath';
  /** The provisioner's `--root`, as written into PVs. */
  readonly hostRoot: string;
  /** Audit only PVs whose `hostPathProvisionerIdentity` annotation names this node. */
  readonly node?: string | undefined;
}

/** How a provisioner kind lays out its volumes. */
export type VolumeLayout = NfsLayout | HostPathLayout;

/** The provisioner kinds whose layout the audit knows, as accepted by `--kind`. */
export type ProvisionerKind = 'nfs-subdir' | 'nfs-client' | 'hostpath';

/** Every {@link ProvisionerKind}, in the order help texts list them. */
export const provisionerKinds: readonly ProvisionerKind[] = ['nfs-subdir', 'nfs-client', 'hostpath'];

/** Where a PV's data is: a volume path relative to the root, or why it has none there. */
export type VolumeLocation =
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'elsewhere'; readonly reason: string };

// The annotation kube-hostpath-provisioner records the node in (shared with the Go example).
const annHostPathNode = 'hostPathProvisionerIdentity';

/** Whether `pv` is audited under `layout` (per-node hostpath audits one node's PVs). */
export function isAuditedHere(layout: VolumeLayout, pv: Readonly<V1PersistentVolume>): boolean {
  if (layout.kind !== 'hostpath' || layout.node === undefined) return true;
  return pv.metadata?.annotations?.[annHostPathNode] === layout.node;
}

/** The directory of `pv` relative to the root, by the rules of `layout`. */
export function locateVolume(layout: VolumeLayout, pv: Readonly<V1PersistentVolume>): VolumeLocation {
  const source =
    layout.kind === 'nfs' ? nfsSource(layout, pv) : (pv.spec?.hostPath?.path ?? pv.spec?.local?.path);
  if (typeof source !== 'string') return source ?? elsewhere('it has neither a hostPath nor a local source');
  const base = layout.kind === 'nfs' ? layout.exportPath : layout.hostRoot;
  try {
    return { kind: 'path', path: relativePathUnder(normalizeBasePath(base), source) };
  } catch {
    return elsewhere(`its path ${JSON.stringify(source)} is not a volume path below ${base}`);
  }
}

function nfsSource(layout: NfsLayout, pv: Readonly<V1PersistentVolume>): string | VolumeLocation {
  const nfs = pv.spec?.nfs;
  if (nfs === undefined) return elsewhere('it has no nfs source');
  if (layout.server !== undefined && nfs.server !== layout.server) {
    return elsewhere(
      `it is on NFS server ${JSON.stringify(nfs.server)}, not ${JSON.stringify(layout.server)}`,
    );
  }
  if (typeof nfs.path !== 'string') return elsewhere('its nfs source has no path');
  return nfs.path;
}

function elsewhere(reason: string): VolumeLocation {
  return { kind: 'elsewhere', reason };
}
