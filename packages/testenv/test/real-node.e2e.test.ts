/**
 * The real node itself: it joins as `system:node:<name>` under the Node authorizer and NodeRestriction,
 * runs a pod whose logs kube-apiserver fetches from the kubelet, and once stopped leaves the host as it
 * found it (sysctls, fixed paths, mounts, links, processes).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { fixedHostPaths, touchedSysctls } from '../src/node/host-state.ts';
import { sandboxImage } from '../src/node/node-images.ts';
import { nodeLayout } from '../src/node/node-layout.ts';
import { describePod, waitForPodPhase } from '../src/node/pod-waits.ts';
import { attachRealNode, startRealNode } from '../src/node/real-node.ts';
import { realNodeAvailable, useTestEnv } from '../src/testing.ts';

async function hostState(): Promise<Record<string, unknown>> {
  const sysctls = await Promise.all(
    touchedSysctls.map(async (key) => [key, (await readFile(join('/proc/sys', key), 'utf8')).trim()]),
  );
  const links = (await readFile('/proc/net/dev', 'utf8')).match(/ktenv\w*/gu) ?? [];
  return {
    sysctls: Object.fromEntries(sysctls),
    paths: fixedHostPaths.filter((path) => existsSync(path)),
    links,
  };
}

describe.skipIf(!realNodeAvailable())('a real node', () => {
  const env = useTestEnv();
  const core = env.kubeConfig.makeApiClient(CoreV1Api);

  it('joins as system:node:<name>, runs a pod, and leaves the host as it found it', async (context) => {
    const controlPlane = await env.controlPlane();
    // One node per host: under `kube-testenv exec --node` the shared one runs, and the other files cover it.
    if (await attachRealNode(controlPlane.dir)) context.skip('a shared real node runs (exec --node)');
    const before = await hostState();
    const node = await startRealNode(controlPlane, { name: 'testenv-node-self', labels: { purpose: 'e2e' } });
    const layout = nodeLayout(controlPlane.dir);
    try {
      const registered = await core.readNode({ name: node.name });
      expect(registered.metadata?.labels).toMatchObject({
        'kubernetes.io/hostname': node.name,
        purpose: 'e2e',
      });
      expect(registered.status?.nodeInfo?.kubeletVersion).toBe(controlPlane.kubernetesVersion);
      expect(registered.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\/2\.3\./u);
      expect(registered.status?.addresses).toContainEqual({ type: 'InternalIP', address: node.nodeIp });

      // NodeRestriction: the kubelet's identity may change its own Node only.
      const kubelet = new KubeConfig();
      kubelet.loadFromFile(layout.kubeletKubeconfig);
      const other = await env.createNode();
      const refused = await kubelet
        .makeApiClient(CoreV1Api)
        .deleteNode({ name: other.metadata?.name ?? '' })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(refused instanceof ApiException ? refused.code : refused).toBe(403);

      const namespace = await env.namespace('node');
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: 'pause' },
          spec: {
            nodeName: node.name,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'pause', image: sandboxImage, imagePullPolicy: 'Never' }],
          },
        },
      });
      const pod = await waitForPodPhase(core, namespace, 'pause', 'Running');
      // On the bridge network: 10.244.0.0/24 by default.
      expect(pod.status?.podIP, describePod(pod)).toMatch(/^10\.244\.0\.\d+$/u);
      // Served by the kubelet through kube-apiserver, which authenticates with its client certificate.
      expect(await core.readNamespacedPodLog({ namespace, name: 'pause' })).toBe('');
    } finally {
      await node.stop();
    }
    expect(await hostState()).toEqual(before);
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(layout.dir);
    expect(await node.processes()).toEqual({
      containerd: undefined,
      'service-proxy': undefined,
      'kube-controller-manager': undefined,
      kubelet: undefined,
    });
    await expect(core.readNode({ name: node.name })).rejects.toMatchObject({ code: 404 });
  });
});
