import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';

/** Shape of a fake Node. */
export interface FakeNodeOptions {
  /** Added to `kubernetes.io/hostname=<name>`, `kubernetes.io/os=linux`. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Replaces the default capacity and allocatable `cpu: 32, memory: 256Gi, pods: 110`. */
  readonly allocatable?: Readonly<Record<string, string>>;
}

const notReadyTaint = 'node.kubernetes.io/not-ready';

/**
 * Creates a Node with no kubelet behind it that the scheduler accepts: Ready, allocatable pods, no
 * taints. Nothing heartbeats it, which is harmless because the node-lifecycle controller never runs.
 */
export async function createFakeNode(
  kubeConfig: KubeConfig,
  name: string,
  options: FakeNodeOptions = {},
): Promise<V1Node> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const resources = options.allocatable ?? { cpu: '32', memory: '256Gi', pods: '110' };
  const now = new Date();
  const created = await core.createNode({
    body: {
      metadata: {
        name,
        labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...options.labels },
      },
      spec: { unschedulable: false },
      // The API server keeps the status sent with a Node create.
      status: {
        capacity: { ...resources },
        allocatable: { ...resources },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'fake node created by kube-testenv',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
  });
  // A cluster that keeps the TaintNodesByCondition admission plugin (TESTENV_KUBECONFIG) adds a
  // not-ready taint that only a node-lifecycle controller would lift.
  const taints = created.spec?.taints ?? [];
  if (!taints.some((taint) => taint.key === notReadyTaint)) return created;
  return core.replaceNode({
    name,
    body: {
      ...created,
      spec: { ...created.spec, taints: taints.filter((taint) => taint.key !== notReadyTaint) },
    },
  });
}
