/**
 * Where a real node keeps its state: a `node/` directory inside the control plane's state directory,
 * so the node is found (and a crashed one cleaned up) wherever the control plane is.
 */
import { join } from 'node:path';

/** Paths inside a node's state directory. */
export interface NodeLayout {
  readonly dir: string;
  /** `node.json`: what another process needs to attach, and what teardown must undo. */
  readonly stateFile: string;
  readonly pidsDir: string;
  readonly logsDir: string;
  readonly pkiDir: string;
  readonly containerdConfig: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  /** runc's state (`--root`), so no container lands in the host's default `/run/runc`. */
  readonly runcRoot: string;
  readonly kubeletRoot: string;
  readonly kubeletConfig: string;
  readonly kubeletKubeconfig: string;
  readonly podLogsDir: string;
  readonly volumePluginDir: string;
  readonly cniConfDir: string;
  /** host-local IPAM's leases (its default is the fixed `/var/lib/cni/networks`). */
  readonly cniDataDir: string;
}

/** The layout of the node state directory inside the control plane's state directory `controlPlaneDir`. */
export function nodeLayout(controlPlaneDir: string): NodeLayout {
  const dir = join(controlPlaneDir, 'node');
  return {
    dir,
    stateFile: join(dir, 'node.json'),
    pidsDir: join(dir, 'pids'),
    logsDir: join(dir, 'logs'),
    pkiDir: join(dir, 'pki'),
    containerdConfig: join(dir, 'containerd', 'config.toml'),
    containerdRoot: join(dir, 'containerd', 'root'),
    containerdState: join(dir, 'containerd', 'state'),
    containerdSocket: join(dir, 'containerd', 'containerd.sock'),
    runcRoot: join(dir, 'runc'),
    kubeletRoot: join(dir, 'kubelet'),
    kubeletConfig: join(dir, 'kubelet-config.yaml'),
    kubeletKubeconfig: join(dir, 'kubelet-kubeconfig.yaml'),
    podLogsDir: join(dir, 'pod-logs'),
    volumePluginDir: join(dir, 'volume-plugins'),
    cniConfDir: join(dir, 'cni', 'net.d'),
    cniDataDir: join(dir, 'cni', 'networks'),
  };
}

/**
 * containerd places shim sockets in one directory of at most 38 characters (its default is the
 * shared `/run/containerd/s`); this one is the node's own, created at start and removed at stop.
 * One real node runs per host anyway: the kubelet's port 10250 and its device-plugin socket are fixed.
 */
export const shimSocketDir = '/run/kube-testenv-node/s';
