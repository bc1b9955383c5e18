/**
 * Waiting on pods that really run (on a real node): for a phase, for readiness, and reading what
 * they printed, with failure messages that say what the pod did instead.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { stopWaiting, waitFor } from '../wait-for.ts';

/** One line per container: its state, restarts and last termination, for a failure message. */
export function describePod(pod: V1Pod): string {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const containers = statuses.map((status) => {
    const [state, detail] = Object.entries(status.state ?? {}).find(([, value]) => value) ?? ['unknown', {}];
    const reason = (detail as { reason?: string; message?: string; exitCode?: number }) ?? {};
    const last = status.lastState?.terminated;
    return [
      `${status.name}: ${state}`,
      reason.reason ? ` (${reason.reason}${reason.message ? `: ${reason.message}` : ''})` : '',
      reason.exitCode !== undefined ? ` exit ${reason.exitCode}` : '',
      `, ready=${status.ready}, restarts=${status.restartCount}`,
      last ? `, last terminated: ${last.reason ?? ''} exit ${last.exitCode}` : '',
    ].join('');
  });
  const conditions = (pod.status?.conditions ?? []).map(
    (c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`,
  );
  return `pod ${pod.metadata?.namespace}/${pod.metadata?.name} on ${pod.spec?.nodeName ?? '(unscheduled)'}: phase ${pod.status?.phase}; ${conditions.join(' ')}; ${containers.join('; ')}`;
}

/**
 * Resolves with the pod once it reached `phase` (`Running`, `Succeeded`…); rejects at once when it
 * reached a terminal phase that is not the one awaited.
 */
export function waitForPodPhase(
  core: CoreV1Api,
  namespace: string,
  name: string,
  phase: string,
  timeoutMs = 90_000,
): Promise<V1Pod> {
  let last: V1Pod | undefined;
  return waitFor(
    async () => {
      last = await core.readNamespacedPod({ namespace, name });
      const now = last.status?.phase;
      if (now === phase) return last;
      if (now === 'Succeeded' || now === 'Failed') {
        throw stopWaiting(new Error(`expected phase ${phase}, but ${describePod(last)}`));
      }
      return undefined;
    },
    { timeoutMs, intervalMs: 250, description: `pod ${namespace}/${name} to be ${phase}` },
  ).catch((err: Error) => {
    throw last && !err.message.includes(describePod(last))
      ? new Error(`${err.message}; ${describePod(last)}`)
      : err;
  });
}

/** Which pods {@link waitForReadyPods} waits for. */
export interface ReadyPodsQuery {
  readonly namespace: string;
  readonly labelSelector: string;
  /** E.g. `spec.nodeName=<node>`: only the pods on one node. */
  readonly fieldSelector?: string;
  /** How many must be Ready (and exist). */
  readonly count: number;
  readonly timeoutMs?: number;
}

/** Resolves with the pods matching the query once there are exactly `count` and all are Ready. */
export function waitForReadyPods(core: CoreV1Api, query: ReadyPodsQuery): Promise<V1Pod[]> {
  const { namespace, labelSelector, fieldSelector, count } = query;
  let last: V1Pod[] = [];
  const isReady = (pod: V1Pod): boolean =>
    pod.metadata?.deletionTimestamp === undefined &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const selector = fieldSelector === undefined ? { labelSelector } : { labelSelector, fieldSelector };
  return waitFor(
    async () => {
      last = (await core.listNamespacedPod({ namespace, ...selector })).items;
      const ready = last.filter(isReady);
      return ready.length === count && last.length === count ? ready : undefined;
    },
    {
      timeoutMs: query.timeoutMs ?? 90_000,
      intervalMs: 250,
      description: `${count} Ready pods ${labelSelector} in ${namespace}`,
    },
  ).catch((err: Error) => {
    throw new Error([err.message, ...last.map(describePod)].join('\n'));
  });
}

/** A container's output as the kubelet serves it through kube-apiserver (`kubectl logs`). */
export function podLogs(
  core: CoreV1Api,
  namespace: string,
  name: string,
  container?: string,
): Promise<string> {
  return core.readNamespacedPodLog(
    container === undefined ? { namespace, name } : { namespace, name, container },
  );
}
