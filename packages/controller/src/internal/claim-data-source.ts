/**
 * What the controller does with a claim's data source: provision it (none, or one the provisioner
 * declares), refuse it (a clone or snapshot restore the provisioner cannot do), or leave it to a
 * volume populator (KEP-1495), as external-provisioner decides in its `prepareProvision`.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ClaimDataSource, DataSourceKind } from '../provisioner.ts';

/**
 * Kinds no volume populator serves: external-provisioner clones or restores them itself (switching
 * on the kind alone), so a provisioner that cannot must say so instead of leaving the claim pending.
 */
const coreKinds: ReadonlySet<string> = new Set(['PersistentVolumeClaim', 'VolumeSnapshot']);

/** The decision for one claim; `source` is the claim's, normalised. */
export type DataSourceDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'handled'; readonly source: ClaimDataSource }
  | { readonly kind: 'unsupported'; readonly source: ClaimDataSource }
  | { readonly kind: 'populator'; readonly source: ClaimDataSource };

/**
 * The claim's data source: `spec.dataSource` first, else `spec.dataSourceRef` (external-provisioner's
 * order; the API server mirrors one into the other for same-namespace sources), or `undefined`.
 */
export function claimDataSource(claim: Readonly<V1PersistentVolumeClaim>): ClaimDataSource | undefined {
  const namespace = claim.metadata?.namespace ?? '';
  const { dataSource, dataSourceRef } = claim.spec ?? {};
  if (dataSource !== undefined) {
    return { apiGroup: dataSource.apiGroup ?? '', kind: dataSource.kind, name: dataSource.name, namespace };
  }
  if (dataSourceRef !== undefined) {
    return {
      apiGroup: dataSourceRef.apiGroup ?? '',
      kind: dataSourceRef.kind,
      name: dataSourceRef.name,
      namespace: dataSourceRef.namespace || namespace,
    };
  }
  return undefined;
}

/** How the controller treats `claim`, given the kinds its provisioner declares. */
export function dataSourceDecision(
  claim: Readonly<V1PersistentVolumeClaim>,
  handled: readonly DataSourceKind[],
): DataSourceDecision {
  const source = claimDataSource(claim);
  if (source === undefined) return { kind: 'none' };
  if (handled.some((kind) => kind.kind === source.kind && kind.apiGroup === source.apiGroup)) {
    return { kind: 'handled', source };
  }
  return { kind: coreKinds.has(source.kind) ? 'unsupported' : 'populator', source };
}

/** `kind.group "name"` (kubectl's way of naming a kind), `kind "name"` for the core group. */
export function describeDataSource(source: ClaimDataSource): string {
  const kind = source.apiGroup === '' ? source.kind : `${source.kind}.${source.apiGroup}`;
  return `${kind} "${source.name}"`;
}
