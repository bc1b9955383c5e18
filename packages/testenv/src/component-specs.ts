import type { Binaries } from './binaries.ts';
import type { PkiFiles } from './pki.ts';
import type { ComponentName, ComponentSpec, StateLayout } from './state-dir.ts';

/** Loopback ports of one control plane. */
export interface ControlPlanePorts {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
}

/**
 * Controllers a storage test needs. Node lifecycle and taint eviction are left out on purpose: fake
 * Nodes have no kubelet heartbeat, so those would mark them unreachable and evict their pods. The
 * expander is in so that resize tests see what a cluster writes next to an external resizer (its
 * `ExternalExpanding` event).
 */
export const controllerManagerControllers: readonly string[] = [
  'persistentvolume-binder-controller',
  'persistentvolume-expander-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'serviceaccount-controller',
  'namespace-controller',
];

/** Seconds the scheduler waits for a volume to be provisioned before retrying the pod (upstream: 600). */
const bindTimeoutSeconds = 60;

/** KubeSchedulerConfiguration: no leader election, and a bind timeout a test can wait out. */
export function schedulerConfiguration(kubeconfig: string): string {
  return [
    'apiVersion: kubescheduler.config.k8s.io/v1',
    'kind: KubeSchedulerConfiguration',
    'clientConnection:',
    `  kubeconfig: ${JSON.stringify(kubeconfig)}`,
    'leaderElection:',
    '  leaderElect: false',
    'profiles:',
    '- schedulerName: default-scheduler',
    '  pluginConfig:',
    '  - name: VolumeBinding',
    '    args:',
    `      bindTimeoutSeconds: ${bindTimeoutSeconds}`,
    '',
  ].join('\n');
}

/** Command lines and health endpoints of the four components, all on loopback. */
export function componentSpecs(
  layout: StateLayout,
  binaries: Binaries,
  pki: PkiFiles,
  ports: ControlPlanePorts,
): Record<ComponentName, ComponentSpec> {
  const loopback = '127.0.0.1';
  const etcdUrl = `http://${loopback}:${ports.etcdClient}`;
  const peerUrl = `http://${loopback}:${ports.etcdPeer}`;
  // The controller-manager and scheduler serve their health endpoints with the apiserver's
  // certificate (its SAN covers 127.0.0.1), so every health check verifies against one CA.
  const servingFlags = [`--tls-cert-file=${pki.servingCert}`, `--tls-private-key-file=${pki.servingKey}`];
  const delegatedAuth = [
    `--authentication-kubeconfig=${layout.kubeconfig}`,
    `--authorization-kubeconfig=${layout.kubeconfig}`,
  ];
  return {
    etcd: {
      command: binaries.etcd,
      args: [
        `--data-dir=${layout.etcdDataDir}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        // Durability is pointless for a throw-away cluster and fsync dominates its latency.
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      healthUrl: `${etcdUrl}/health`,
    },
    'kube-apiserver': {
      command: binaries.kubeApiserver,
      args: [
        `--etcd-servers=${etcdUrl}`,
        `--bind-address=${loopback}`,
        `--advertise-address=${loopback}`,
        `--secure-port=${ports.apiserver}`,
        ...servingFlags,
        `--client-ca-file=${pki.caCert}`,
        `--service-account-issuer=https://${loopback}:${ports.apiserver}`,
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        // Node first, as in kubeadm clusters: a real node's kubelet (system:node:<name>) gets exactly
        // what its pods need, and NodeRestriction keeps it to its own Node and pods.
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        // How kube-apiserver reaches a real node's kubelet for `logs` and `exec`: its node IP (the
        // host name a kubelet reports may not resolve), with a client certificate of the CA.
        `--kubelet-client-certificate=${pki.kubeletClientCert}`,
        `--kubelet-client-key=${pki.kubeletClientKey}`,
        '--kubelet-preferred-address-types=InternalIP,Hostname',
        // A loopback advertise address is only valid without the `kubernetes` Endpoints reconciler.
        '--endpoint-reconciler-type=none',
        // Only the node-lifecycle controller, never run here, would lift its not-ready taint.
        '--disable-admission-plugins=TaintNodesByCondition',
        '--allow-privileged=true',
        '--enable-priority-and-fairness=false',
        '--max-requests-inflight=0',
        '--max-mutating-requests-inflight=0',
      ],
      healthUrl: `https://${loopback}:${ports.apiserver}/readyz`,
    },
    'kube-controller-manager': {
      command: binaries.kubeControllerManager,
      args: [
        `--kubeconfig=${layout.kubeconfig}`,
        ...delegatedAuth,
        '--leader-elect=false',
        `--bind-address=${loopback}`,
        `--secure-port=${ports.controllerManager}`,
        ...servingFlags,
        `--controllers=${controllerManagerControllers.join(',')}`,
        // Only re-queues everything; binding itself is event driven. Short so recovery paths are fast.
        '--pvclaimbinder-sync-period=2s',
        // The default client limit (20 qps) makes the PV binder, not the provisioner under test, the
        // bottleneck of bulk tests and benchmarks: binding one claim takes several writes.
        '--kube-api-qps=200',
        '--kube-api-burst=400',
      ],
      healthUrl: `https://${loopback}:${ports.controllerManager}/healthz`,
    },
    'kube-scheduler': {
      command: binaries.kubeScheduler,
      args: [
        `--config=${layout.schedulerConfig}`,
        ...delegatedAuth,
        `--bind-address=${loopback}`,
        `--secure-port=${ports.scheduler}`,
        ...servingFlags,
      ],
      healthUrl: `https://${loopback}:${ports.scheduler}/readyz`,
    },
  };
}
