/**
 * The control plane a run measures: the one `TESTENV_KUBECONFIG` names, or a fresh
 * @kube-provisioner/testenv control plane started for the run and stopped after it.
 */
import { createKubeApi } from '@kube-provisioner/controller';
import type { KubeApiClient } from '@kube-provisioner/controller/client';
import { attachControlPlane, type ControlPlane, startControlPlane } from '@kube-provisioner/testenv';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { type RequestCounts, readRequestCounts } from './api-requests.ts';
import { sampleProcess } from './proc-stats.ts';

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
  /**
   * CPU seconds the control plane's processes (etcd, kube-apiserver, kube-controller-manager,
   * kube-scheduler) have used so far, summed; `undefined` for a cluster whose processes are unknown
   * (`TESTENV_KUBECONFIG` without `TESTENV_DIR`). A provisioner's requests and the binding its PVs
   * start cost these processes CPU on the same machine, which is why it is measured beside the
   * provisioner's own.
   */
  controlPlaneCpuS(): Promise<number | undefined>;
  /** kube-apiserver's request counts so far, every client's (see {@link readRequestCounts}). */
  apiRequestCounts(): Promise<RequestCounts>;
  /**
   * The testenv control plane's handle (its processes, stopping and starting a component);
   * `undefined` where {@link controlPlaneCpuS} is.
   */
  readonly controlPlane: ControlPlane | undefined;
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
    return withClient(
      existing,
      kubeConfig,
      gitVersion,
      await attachedControlPlane(onProgress),
      async () => {},
    );
  }
  const controlPlane = await startControlPlane({ onProgress });
  return withClient(
    controlPlane.kubeconfigPath,
    controlPlane.kubeConfig,
    controlPlane.kubernetesVersion,
    controlPlane,
    () => controlPlane.stop(),
  );
}

/** The control plane in `TESTENV_DIR`, whose processes' CPU the backlog measures; none without it. */
async function attachedControlPlane(
  onProgress: (message: string) => void,
): Promise<ControlPlane | undefined> {
  const dir = process.env.TESTENV_DIR;
  if (!dir) {
    onProgress('TESTENV_DIR is not set: the control plane CPU is not measured');
    return undefined;
  }
  try {
    return await attachControlPlane(dir);
  } catch (err) {
    onProgress(`the control plane CPU is not measured: ${(err as Error).message}`);
    return undefined;
  }
}

/** The summed CPU seconds of `controlPlane`'s running processes. */
async function controlPlaneCpuS(controlPlane: ControlPlane): Promise<number> {
  const pids = Object.values(await controlPlane.processes()).filter((pid) => pid !== undefined);
  const samples = await Promise.all(pids.map((pid) => sampleProcess(pid)));
  return samples.reduce((sum, sample) => sum + sample.cpuS, 0);
}

function withClient(
  kubeconfigPath: string,
  kubeConfig: KubeConfig,
  kubernetesVersion: string,
  controlPlane: ControlPlane | undefined,
  stop: () => Promise<void>,
): BenchCluster {
  const api = createKubeApi(kubeConfig, { rateLimit: unthrottled, userAgent: 'kube-provisioner-bench' });
  return {
    kubeconfigPath,
    kubeConfig,
    kubernetesVersion,
    api,
    controlPlaneCpuS: async () => (controlPlane ? controlPlaneCpuS(controlPlane) : undefined),
    apiRequestCounts: () => readRequestCounts(kubeConfig),
    controlPlane,
    close: async () => {
      await api.close();
      await stop();
    },
  };
}
