/**
 * Every way our chart's rendering may differ from the upstream nfs-subdir-external-provisioner chart's
 * for the same release name and values (reviewed list; the golden test in chart-upstream-names.test.ts
 * fails on any other difference, and on an entry here that no longer matches anything).
 *
 * None of these touches an immutable field: StorageClass provisioner/parameters/reclaimPolicy/
 * volumeBindingMode, a Deployment's selector, or a claim's spec.
 */

/** How our chart was rendered: with its own values.yaml, or with upstream's in its place. */
export type RenderMode = 'install' | 'reuse-values';

/** One reviewed difference. */
export interface AllowedDifference {
  /** Object kind, or `*` for every kind. */
  readonly kind: string;
  /** Compared field (`labels.<key>`, `rules`, …), or `present` for an object only one side renders. */
  readonly field: string;
  /** Restricts the allowance to these case ids of chart-matrix.ts. */
  readonly cases?: readonly string[];
  /** Restricts the allowance to one render mode. */
  readonly mode?: RenderMode;
  readonly why: string;
}

export const allowedDifferences: readonly AllowedDifference[] = [
  {
    kind: '*',
    field: 'labels.chart',
    why: 'names this chart and its version; a plain label, changed by every chart upgrade, upstream ones too',
  },
  {
    kind: 'ClusterRole',
    field: 'rules',
    why: "this provisioner's least privilege (rbac-rules.ts): PV patch for the delete-policy annotation, no nodes, no claim updates; PSP `use` in the policy group",
  },
  {
    kind: 'Role',
    field: 'rules',
    why: 'leader election takes a coordination.k8s.io Lease (get/watch/create/update) where upstream took an Endpoints lock',
  },
  {
    kind: 'PodSecurityPolicy',
    field: 'present',
    cases: ['psp'],
    why: 'PodSecurityPolicy is not served since Kubernetes 1.25; rendered only where it is (case psp-served)',
  },
];
