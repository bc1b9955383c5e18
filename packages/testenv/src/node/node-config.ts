/**
 * The configuration files of a real node: containerd's, the kubelet's and the CNI network's. Each
 * setting that departs from upstream's defaults is one this kind of host needs (cgroup v1 without
 * systemd, no CAP_SYS_RESOURCE, no registry) or one that keeps the node's state inside its own
 * directory instead of the host's fixed paths.
 */
import type { NodeBinaries } from './node-binaries.ts';
import { type NodeLayout, shimSocketDir } from './node-layout.ts';

/** The pod network: a Linux bridge with host-local addresses, no iptables. */
export interface PodNetwork {
  /** Bridge device, created at start and deleted at stop. */
  readonly bridge: string;
  /** Pod addresses, e.g. `10.244.0.0/24`; the bridge takes the first as the pods' gateway. */
  readonly subnet: string;
  /**
   * A port-less bridge device that holds the `kubernetes` Service's cluster IP as a host address, so
   * pods reach the relay to kube-apiserver (the pod bridge itself may carry only the gateway address,
   * and this kernel may lack the `dummy` device type).
   */
  readonly serviceLink: string;
}

/** The default pod network: a subnet no other part of testenv uses (Services are `10.0.0.0/24`). */
export const defaultPodNetwork: PodNetwork = {
  bridge: 'ktenv0',
  subnet: '10.244.0.0/24',
  serviceLink: 'ktenvsvc0',
};

/** The CNI network's name: it also names host-local's lease directory and the CNI result cache files. */
export const cniNetworkName = 'kube-testenv';

/** TOML basic string. */
const toml = (value: string): string => JSON.stringify(value);

/**
 * containerd's configuration (version 3, which containerd 2.2 and 2.3 read): every directory and
 * socket under the node's state directory, the CRI plugin with runc under cgroupfs, the local pause
 * image pinned as the sandbox image, and the plugins that would touch fixed host paths (NRI's socket,
 * `/opt/containerd`, CDI's spec directories) off.
 */
export function containerdConfig(
  layout: NodeLayout,
  binaries: NodeBinaries,
  sandboxImage: string,
  runc: string,
): string {
  return `version = 3
root = ${toml(layout.containerdRoot)}
state = ${toml(layout.containerdState)}
# Kept at 0: raising its own OOM protection needs CAP_SYS_RESOURCE.
oom_score = 0
# Nothing from the host's /etc/containerd.
imports = []
disabled_plugins = [
  "io.containerd.nri.v1.nri",
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = ${toml(layout.containerdSocket)}

[plugins."io.containerd.shim.v1.manager"]
  socket_dir = ${toml(shimSocketDir)}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${toml(sandboxImage)}

[plugins."io.containerd.cri.v1.runtime"]
  # Without CAP_SYS_RESOURCE a container's oom_score_adj may not go below containerd's own; without
  # this every sandbox fails with runc's "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${toml(runc)}
        Root = ${toml(layout.runcRoot)}
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${toml(binaries.cniDir)}]
    conf_dir = ${toml(layout.cniConfDir)}
    max_conf_num = 1
    # containerd brings a pod's loopback up itself instead of through a second CNI network, whose
    # result cache files in the fixed /var/lib/cni would outlive a sandbox killed at teardown.
    use_internal_loopback = true
`;
}

/**
 * The CNI network: one bridge whose address is the pods' gateway, host-local addresses leased in the
 * node's directory, and no masquerading (so no iptables rules to add and remove).
 */
export function cniConfList(layout: NodeLayout, network: PodNetwork = defaultPodNetwork): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: cniNetworkName,
      plugins: [
        {
          type: 'bridge',
          bridge: network.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: layout.cniDataDir,
            ranges: [[{ subnet: network.subnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

/** What the kubelet's configuration depends on. */
export interface KubeletConfigOptions {
  /** The control plane's CA: it signs the client certificates the kubelet accepts (kube-apiserver's). */
  readonly clientCaFile: string;
}

/**
 * KubeletConfiguration (JSON, which the kubelet reads as YAML). Authentication by client certificate
 * and webhook, authorization by webhook: kube-apiserver reaches `logs` and `exec` with its own
 * client certificate. The cgroup settings are the ones cgroup v1 without systemd allows: no QoS
 * hierarchy, nothing enforced on node allocatable. Image garbage collection and disk-pressure eviction
 * are effectively off: the images were imported and cannot be pulled again, and a test host's disk
 * use says nothing about the code under test.
 */
export function kubeletConfiguration(layout: NodeLayout, options: KubeletConfigOptions): string {
  const config = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: options.clientCaFile },
    },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    // Kubernetes 1.35+ refuses cgroup v1 unless told otherwise; the host has no systemd.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupsPerQOS: false,
    enforceNodeAllocatable: [],
    // Lowering its own score needs CAP_SYS_RESOURCE.
    oomScoreAdj: 0,
    failSwapOn: false,
    podLogsDir: layout.podLogsDir,
    volumePluginDir: layout.volumePluginDir,
    resolvConf: '/etc/resolv.conf',
    healthzBindAddress: '127.0.0.1',
    // Otherwise the kubelet adds iptables chains and a KUBE-FIREWALL rule to the host's INPUT and
    // OUTPUT chains that outlive it; nothing here needs them (no kube-proxy, no NodePorts).
    makeIPTablesUtilChains: false,
    readOnlyPort: 0,
    serializeImagePulls: false,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    // Status every few seconds, so a test sees probe results and pod phases soon.
    nodeStatusUpdateFrequency: '4s',
    syncFrequency: '10s',
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
