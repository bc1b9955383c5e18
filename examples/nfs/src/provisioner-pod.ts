/**
 * The demo's provisioner as a pod on a real node (kubelet and containerd beside the test control
 * plane): the example Deployment as shipped, but for the export, which the kubelet here cannot mount
 * over NFS (this kernel has no NFS client) and gets as a `hostPath` of the exported directory.
 */
import {
  applyManifests,
  type ControlPlane,
  type RealNode,
  RealNodeUnavailableError,
  startRealNode,
  waitFor,
} from '@kube-provisioner/testenv';
import { ensureProjectImage, projectImage } from '@kube-provisioner/testenv/internal';
import { CoreV1Api, type KubeConfig, type V1Deployment, type V1Pod } from '@kubernetes/client-node';

/** What {@link startProvisionerPod} needs. */
export interface ProvisionerPodOptions {
  readonly controlPlane: ControlPlane;
  readonly kubeConfig: KubeConfig;
  /** The example Deployment, as rendered. */
  readonly deployment: V1Deployment;
  /** Environment the pod's container gets instead of the manifest's placeholders. */
  readonly env: Readonly<Record<string, string>>;
  /** The exported directory on this host. */
  readonly exportDir: string;
  readonly timeoutMs: number;
  readonly detail: (line: string) => void;
}

/** A provisioner pod running on its node; `stop` removes the node and all it ran. */
export interface ProvisionerPod {
  readonly pod: V1Pod;
  stop(): Promise<void>;
}

const ready = (pod: V1Pod): boolean =>
  (pod.status?.conditions ?? []).some(
    (condition) => condition.type === 'Ready' && condition.status === 'True',
  );

/** One line on where a pod stands, for a failure message. */
function podState(pod: V1Pod): string {
  const containers = (pod.status?.containerStatuses ?? []).map((status) => {
    const state = status.state?.waiting ?? status.state?.terminated;
    return `${status.name}: ${state?.reason ?? 'running'} ${state?.message ?? ''} (restarts ${status.restartCount})`;
  });
  return `pod ${pod.metadata?.name} ${pod.status?.phase} on ${pod.spec?.nodeName ?? 'no node'}; ${containers.join('; ')}`;
}

/**
 * Starts a real node, loads the image into it and applies the Deployment; resolves once its pod is
 * Ready (kubelet's readiness probe passed), or with `undefined` when this machine cannot run a node.
 */
export async function startProvisionerPod(
  options: ProvisionerPodOptions,
): Promise<ProvisionerPod | undefined> {
  const { detail, deployment } = options;
  let node: RealNode;
  try {
    node = await startRealNode(options.controlPlane, { onProgress: detail, stopOnExit: true });
  } catch (err) {
    if (!(err instanceof RealNodeUnavailableError)) throw err;
    detail(`No real node on this machine (${err.message}):`);
    detail('the image entry point runs as a local process instead.');
    return undefined;
  }
  try {
    detail(`node ${node.name} Ready (kubelet and containerd, ${node.nodeIp})`);
    const image = projectImage('nfs-subdir-provisioner');
    await ensureProjectImage(image, { onProgress: detail });
    await node.loadImage(image.tag);
    detail(`${image.tag} loaded into the node's containerd`);
    const namespace = deployment.metadata?.namespace ?? '';
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    // The example namespace enforces Pod Security "baseline", which forbids hostPath volumes: the
    // stand-in for the NFS mount needs "privileged" here, and only here.
    const current = await core.readNamespace({ name: namespace });
    const labels = { ...current.metadata?.labels, 'pod-security.kubernetes.io/enforce': 'privileged' };
    await core.replaceNamespace({
      name: namespace,
      body: { ...current, metadata: { ...current.metadata, labels } },
    });
    detail(`namespace ${namespace}: Pod Security "privileged" for the export's hostPath stand-in`);
    await applyManifests(options.kubeConfig, [asPod(deployment, options)]);
    const labelSelector = Object.entries(deployment.spec?.selector.matchLabels ?? {})
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    let seen: V1Pod[] = [];
    const pod = await waitFor(
      async () => {
        seen = (await core.listNamespacedPod({ namespace, labelSelector })).items;
        return seen.find(ready);
      },
      { timeoutMs: options.timeoutMs, description: `a Ready pod of Deployment ${deployment.metadata?.name}` },
    ).catch(async (err: Error) => {
      const events = (await core.listNamespacedEvent({ namespace })).items.map(
        (event) =>
          `${event.involvedObject.kind}/${event.involvedObject.name}: ${event.reason} ${event.message}`,
      );
      throw new Error([err.message, ...seen.map(podState), ...events].join('\n'));
    });
    detail(`pod ${pod.metadata?.name} Running and Ready on ${pod.spec?.nodeName}: kubelet's probes pass`);
    return { pod, stop: () => node.stop() };
  } catch (err) {
    await node.stop().catch(() => undefined);
    throw err;
  }
}

/** The Deployment with the demo's settings and the export as a `hostPath`. */
function asPod(deployment: V1Deployment, options: ProvisionerPodOptions): V1Deployment {
  const template = deployment.spec?.template;
  const podSpec = template?.spec;
  if (deployment.spec === undefined || template === undefined || podSpec === undefined) {
    throw new Error('the example Deployment has no pod template');
  }
  const containers = podSpec.containers.map((container) => ({
    ...container,
    env: (container.env ?? []).map((variable) => {
      const value = options.env[variable.name];
      return value === undefined ? variable : { name: variable.name, value };
    }),
  }));
  const volumes = (podSpec.volumes ?? []).map((volume) =>
    volume.nfs === undefined
      ? volume
      : { name: volume.name, hostPath: { path: options.exportDir, type: 'Directory' } },
  );
  return {
    ...deployment,
    spec: { ...deployment.spec, template: { ...template, spec: { ...podSpec, containers, volumes } } },
  };
}
