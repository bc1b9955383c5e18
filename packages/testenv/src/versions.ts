/**
 * The upstream releases the control plane is built from: the one place to bump.
 *
 * `kubernetes` is the newest `k8s.io/kubernetes` release that builds with the installed Go; `etcd` is
 * the newest patch of the etcd minor that release supports.
 */
export const pinnedVersions: { readonly kubernetes: string; readonly etcd: string; readonly go: string } = {
  kubernetes: 'v1.36.3',
  etcd: 'v3.6.16',
  // The wrapper modules' `go` line: at least k/k's own, and it also fixes the GODEBUG defaults.
  go: '1.26.0',
};

/** The published tag of the staging modules (`k8s.io/api`, …) that matches a Kubernetes release. */
export function stagingVersion(kubernetes: string): string {
  const match = /^v1\.(\d+\.\d+.*)$/.exec(kubernetes);
  if (!match) throw new Error(`not a Kubernetes release tag: ${kubernetes}`);
  return `v0.${match[1]}`;
}

/** Name of the cache directory holding the binaries of one version pair. */
export function cacheKey(versions: { readonly kubernetes: string; readonly etcd: string }): string {
  return `${versions.kubernetes}-etcd-${versions.etcd}`;
}

/**
 * The Helm release built for chart tests (`kube-testenv helm-path`): the newest `helm.sh/helm/v4` on the
 * module proxy that builds with the pinned Go.
 */
export const pinnedHelmVersion = 'v4.3.1';

/**
 * What a real node (`startRealNode`) is built from, beside the kubelet of
 * {@link pinnedVersions}.kubernetes: containerd (Kubernetes 1.36 supports only containerd 2.2 and 2.3)
 * and the CNI reference plugins, both installed with `go install` from the module proxy.
 */
export const pinnedNodeVersions: { readonly containerd: string; readonly cniPlugins: string } = {
  containerd: 'v2.3.7',
  cniPlugins: 'v1.9.1',
};
