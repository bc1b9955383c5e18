import { describe, expect, it } from 'vitest';
import type { NodeBinaries } from '../src/node/node-binaries.ts';
import {
  cniConfList,
  containerdConfig,
  defaultPodNetwork,
  kubeletConfiguration,
} from '../src/node/node-config.ts';
import { nodeLayout, shimSocketDir } from '../src/node/node-layout.ts';
import { nodeControllers, nodeProcessSpecs } from '../src/node/node-specs.ts';
import { pkiFiles } from '../src/pki.ts';

const layout = nodeLayout('/state');
const binaries: NodeBinaries = {
  versionDir: '/cache/node',
  dir: '/cache/node/bin',
  kubelet: '/cache/node/bin/kubelet',
  containerd: '/cache/node/bin/containerd',
  containerdShim: '/cache/node/bin/containerd-shim-runc-v2',
  ctr: '/cache/node/bin/ctr',
  cniDir: '/cache/node/bin/cni',
  pause: '/cache/node/bin/pause',
  serviceProxy: '/cache/node/bin/service-proxy',
};

describe('a real node’s configuration', () => {
  it('keeps containerd’s state in the node directory and restricts oom_score_adj (no CAP_SYS_RESOURCE)', () => {
    const config = containerdConfig(layout, binaries, 'localhost/kube-testenv/pause:1', '/usr/sbin/runc');
    expect(config).toMatch(/^version = 3\n/u);
    expect(config).toContain('root = "/state/node/containerd/root"');
    expect(config).toContain('state = "/state/node/containerd/state"');
    expect(config).toContain('address = "/state/node/containerd/containerd.sock"');
    expect(config).toContain(`socket_dir = "${shimSocketDir}"`);
    expect(shimSocketDir.length).toBeLessThanOrEqual(38);
    expect(config).toContain('restrict_oom_score_adj = true');
    expect(config).toContain('sandbox = "localhost/kube-testenv/pause:1"');
    expect(config).toContain('Root = "/state/node/runc"');
    expect(config).toContain('SystemdCgroup = false');
    expect(config).toContain('"io.containerd.nri.v1.nri"');
    expect(config).toContain('imports = []');
  });

  it('configures the kubelet for cgroup v1 without systemd, and without iptables chains', () => {
    const config = JSON.parse(kubeletConfiguration(layout, { clientCaFile: '/state/pki/ca.crt' }));
    expect(config).toMatchObject({
      kind: 'KubeletConfiguration',
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
      makeIPTablesUtilChains: false,
      containerRuntimeEndpoint: 'unix:///state/node/containerd/containerd.sock',
      podLogsDir: '/state/node/pod-logs',
      authentication: { anonymous: { enabled: false }, x509: { clientCAFile: '/state/pki/ca.crt' } },
      authorization: { mode: 'Webhook' },
    });
  });

  it('uses one bridge network whose leases stay in the node directory', () => {
    const conf = JSON.parse(cniConfList(layout));
    expect(conf.plugins).toEqual([
      expect.objectContaining({
        type: 'bridge',
        bridge: defaultPodNetwork.bridge,
        isGateway: true,
        ipMasq: false,
        ipam: expect.objectContaining({ type: 'host-local', dataDir: '/state/node/cni/networks' }),
      }),
    ]);
  });

  it('runs the kubelet as the named node and the workload controllers in a controller-manager of its own', () => {
    const specs = nodeProcessSpecs({
      layout,
      binaries,
      kubeControllerManager: '/bin/kube-controller-manager',
      pki: pkiFiles('/state/pki'),
      adminKubeconfig: '/state/kubeconfig.yaml',
      name: 'node-a',
      nodeIp: '192.0.2.2',
      labels: { zone: 'a' },
      apiserverAddress: '127.0.0.1:6443',
      serviceAddress: '10.0.0.1:443',
      controllerManagerPort: 2005,
    });
    expect(specs.kubelet.args).toEqual(
      expect.arrayContaining(['--hostname-override=node-a', '--node-ip=192.0.2.2', '--node-labels=zone=a']),
    );
    expect(specs['service-proxy'].args).toEqual(['10.0.0.1:443', '127.0.0.1:6443']);
    expect(specs['kube-controller-manager'].args).toContain(`--controllers=${nodeControllers.join(',')}`);
    expect(specs['kube-controller-manager'].args).toContain('--root-ca-file=/state/pki/ca.crt');
    expect(nodeControllers).not.toContain('node-lifecycle-controller');
    expect(specs.containerd.env?.PATH?.startsWith('/cache/node/bin:')).toBe(true);
  });
});
