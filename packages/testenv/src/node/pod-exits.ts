/**
 * How pods ended: a watch that records every container's last terminated state before its pod
 * disappears, so a test can tell a graceful exit on the kubelet's SIGTERM (code 0, within the grace
 * period) from a kill after it (137), although the pod object is gone by the time the test looks.
 */
import { type KubeConfig, type V1Pod, Watch } from '@kubernetes/client-node';

/** A container's end as its pod last reported it. */
export interface ContainerExit {
  readonly pod: string;
  readonly container: string;
  readonly exitCode: number;
  readonly reason: string | undefined;
  /** From the pod's deletion (when the kubelet sends SIGTERM) to the container's exit, in ms. */
  readonly afterDeletionMs: number | undefined;
}

/** A running recorder of container exits. */
export interface PodExitRecorder {
  /** The exits recorded so far for the pod called `pod`. */
  exits(pod: string): ContainerExit[];
  /** Whether the watch saw the pod deleted. */
  deleted(pod: string): boolean;
  /** Ends the watch. */
  stop(): void;
}

/** Watches the pods matching `labelSelector` in `namespace` and records how their containers ended. */
export async function recordPodExits(
  kubeConfig: KubeConfig,
  namespace: string,
  labelSelector: string,
): Promise<PodExitRecorder> {
  const exits = new Map<string, ContainerExit>();
  const deleted = new Set<string>();
  const record = (pod: V1Pod): void => {
    const name = pod.metadata?.name ?? '';
    const deletion = pod.metadata?.deletionTimestamp;
    for (const status of pod.status?.containerStatuses ?? []) {
      const terminated = status.state?.terminated;
      if (!terminated) continue;
      exits.set(`${name}/${status.name}`, {
        pod: name,
        container: status.name,
        exitCode: terminated.exitCode,
        reason: terminated.reason,
        afterDeletionMs:
          deletion && terminated.finishedAt
            ? new Date(terminated.finishedAt).getTime() - new Date(deletion).getTime()
            : undefined,
      });
    }
  };
  const request = await new Watch(kubeConfig).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { labelSelector },
    (type: string, pod: V1Pod) => {
      record(pod);
      if (type === 'DELETED') deleted.add(pod.metadata?.name ?? '');
    },
    () => {},
  );
  return {
    exits: (pod) => [...exits.values()].filter((exit) => exit.pod === pod),
    deleted: (pod) => deleted.has(pod),
    stop: () => request.abort(),
  };
}
