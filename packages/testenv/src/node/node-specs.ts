/**
 * The command lines of a real node's processes: containerd, the Service relay, a second
 * kube-controller-manager with the workload controllers, and the kubelet.
 */
import type { PkiFiles } from '../pki.ts';
import type { NodeBinaries } from './node-binaries.ts';
import type { NodeLayout } from './node-layout.ts';
import type { NodeProcessName, NodeProcessSpec } from './node-processes.ts';

/**
 * Controllers that only matter once pods run, in a kube-controller-manager of the node's own so the
 * control plane's stays as it is for fake-node tests (where a Deployment must not spawn pods that
 * never run): workloads, their garbage collection, and the `kube-root-ca.crt` ConfigMap that every
 * projected service-account token volume needs.
 */
export const nodeControllers: readonly string[] = [
  'deployment-controller',
  'replicaset-controller',
  'daemonset-controller',
  'statefulset-controller',
  'garbage-collector-controller',
  'root-ca-certificate-publisher-controller',
];

/** What the command lines depend on. */
export interface NodeSpecInputs {
  readonly layout: NodeLayout;
  readonly binaries: NodeBinaries;
  /** The control plane's kube-controller-manager executable. */
  readonly kubeControllerManager: string;
  readonly pki: PkiFiles;
  /** The control plane's admin kubeconfig. */
  readonly adminKubeconfig: string;
  readonly name: string;
  readonly nodeIp: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `host:port` of kube-apiserver on loopback. */
  readonly apiserverAddress: string;
  /** `host:port` the relay listens on: the `kubernetes` Service's cluster IP and port. */
  readonly serviceAddress: string;
  /** Loopback port of the node's kube-controller-manager's health endpoint. */
  readonly controllerManagerPort: number;
}

/** The node's processes by name. */
export function nodeProcessSpecs(inputs: NodeSpecInputs): Record<NodeProcessName, NodeProcessSpec> {
  const { layout, binaries, pki } = inputs;
  const labels = Object.entries(inputs.labels).map(([key, value]) => `${key}=${value}`);
  return {
    containerd: {
      command: binaries.containerd,
      args: ['--config', layout.containerdConfig],
      // containerd starts `containerd-shim-runc-v2` from PATH.
      env: { PATH: `${binaries.dir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
    },
    'service-proxy': {
      command: binaries.serviceProxy,
      args: [inputs.serviceAddress, inputs.apiserverAddress],
    },
    'kube-controller-manager': {
      command: inputs.kubeControllerManager,
      args: [
        `--kubeconfig=${inputs.adminKubeconfig}`,
        `--authentication-kubeconfig=${inputs.adminKubeconfig}`,
        `--authorization-kubeconfig=${inputs.adminKubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${inputs.controllerManagerPort}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--controllers=${nodeControllers.join(',')}`,
        `--root-ca-file=${pki.caCert}`,
      ],
    },
    kubelet: {
      command: binaries.kubelet,
      args: [
        `--config=${layout.kubeletConfig}`,
        `--kubeconfig=${layout.kubeletKubeconfig}`,
        `--root-dir=${layout.kubeletRoot}`,
        `--hostname-override=${inputs.name}`,
        // The host name may resolve to 127.0.0.1, which a node's address may not be.
        `--node-ip=${inputs.nodeIp}`,
        ...(labels.length > 0 ? [`--node-labels=${labels.join(',')}`] : []),
        '--v=2',
      ],
    },
  };
}
