import { describe, expect, it } from 'vitest';
import type { Binaries } from '../src/binaries.ts';
import {
  componentSpecs,
  controllerManagerControllers,
  schedulerConfiguration,
} from '../src/component-specs.ts';
import { pkiFiles } from '../src/pki.ts';
import { componentNames, stateLayout } from '../src/state-dir.ts';

const layout = stateLayout('/state');
const binaries: Binaries = {
  dir: '/bin',
  etcd: '/bin/etcd',
  kubeApiserver: '/bin/kube-apiserver',
  kubeControllerManager: '/bin/kube-controller-manager',
  kubeScheduler: '/bin/kube-scheduler',
  kubectl: '/bin/kubectl',
};
const ports = { etcdClient: 2001, etcdPeer: 2002, apiserver: 6443, controllerManager: 2003, scheduler: 2004 };
const specs = componentSpecs(layout, binaries, pkiFiles('/state/pki'), ports);

describe('component command lines', () => {
  it('listen on loopback only', () => {
    for (const name of componentNames) {
      const spec = specs[name];
      expect(new URL(spec.healthUrl).hostname).toBe('127.0.0.1');
      for (const arg of spec.args.filter((a) => /(-address|-urls)=/.test(a))) {
        expect(arg).toMatch(/127\.0\.0\.1/);
      }
    }
  });

  it('enforce RBAC, and drop only the admission plugin that needs the node-lifecycle controller', () => {
    const apiserver = specs['kube-apiserver'].args;
    expect(apiserver).toContain('--authorization-mode=Node,RBAC');
    expect(apiserver).toContain('--enable-admission-plugins=NodeRestriction');
    expect(apiserver).toContain('--secure-port=6443');
    expect(apiserver).toContain('--disable-admission-plugins=TaintNodesByCondition');
    expect(apiserver).toContain('--etcd-servers=http://127.0.0.1:2001');
  });

  it('run the storage controllers and never node lifecycle or taint eviction', () => {
    const controllers = specs['kube-controller-manager'].args.find((a) => a.startsWith('--controllers='));
    expect(controllers).toBe(`--controllers=${controllerManagerControllers.join(',')}`);
    expect(controllers).toContain('persistentvolume-binder-controller');
    expect(controllers).toContain('persistentvolume-expander-controller');
    expect(controllers).toContain('persistentvolumeclaim-protection-controller');
    expect(controllers).toContain('persistentvolume-protection-controller');
    expect(controllers).not.toMatch(/node-lifecycle|taint-eviction/);
    expect(specs['kube-controller-manager'].args).toContain('--leader-elect=false');
  });

  it('configure the scheduler without leader election and with a short volume bind timeout', () => {
    const config = schedulerConfiguration('/state/kubeconfig.yaml');
    expect(config).toContain('kubeconfig: "/state/kubeconfig.yaml"');
    expect(config).toContain('leaderElect: false');
    expect(config).toMatch(/name: VolumeBinding\n\s+args:\n\s+bindTimeoutSeconds: 60/);
    expect(specs['kube-scheduler'].args).toContain(`--config=${layout.schedulerConfig}`);
  });
});
