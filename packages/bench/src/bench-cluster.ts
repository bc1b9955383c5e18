/**
 * The control plane a run measures: the one `TESTENV_KUBECONFIG` names, or a fresh
 * @kube-provisioner/testenv control plane started for the run and stopped after it.
 */
import { createKubeApi, type KubeApiClient } from '@kube-provisioner/controller';
import { startControlPlane } from '@kube-provisioner/testenv';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';

/** A cluster and an unthrottled admin client for the bench's own requests. */
export interface BenchCluster {
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly kubernetesVersion: string;
  /**
   * No client-side rate limit: the bench's own requests (creating claims, the ceiling's PVs) must
   * only be limited by the API server.
   */
  readonly api: KubeApiClient;
  /** Closes the client and stops the control plane if the run started it. */
  close(): Promise<void>;
}

const unthrottled = { qps: Number.POSITIVE_INFINITY, burst: 1 };

/** Opens `TESTENV_KUBECONFIG`'s cluster, or starts one. */
export async function openBenchCluster(onProgress: (message: string) => void): Promise<BenchCluster> {
  const existing = process.env.TESTENV_KUBECONFIG;
  if (existing !== undefined && existing !== '') {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(existing);
    const { gitVersion } = await kubeConfig.makeApiClient(VersionApi).getCode();
    onProgress(`using the cluster of TESTENV_KUBECONFIG (${gitVersion})`);
    return withClient(existing, kubeConfig, gitVersion, async () => {});
  }
  const controlPlane = await startControlPlane({ onProgress });
  return withClient(
    controlPlane.kubeconfigPath,
    controlPlane.kubeConfig,
    controlPlane.kubernetesVersion,
    () => controlPlane.stop(),
  );
}

function withClient(
  kubeconfigPath: string,
  kubeConfig: KubeConfig,
  kubernetesVersion: string,
  stop: () => Promise<void>,
): BenchCluster {
  const api = createKubeApi(kubeConfig, { rateLimit: unthrottled, userAgent: 'kube-provisioner-bench' });
  return {
    kubeconfigPath,
    kubeConfig,
    kubernetesVersion,
    api,
    close: async () => {
      await api.close();
      await stop();
    },
  };
}
